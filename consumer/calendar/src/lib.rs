//! A user's crate for the consumer check (.ci/consumer): its dependencies are what it tests.
