//! What a session reads from and writes to (docs/serve.md §9.3): a TCP socket's bytes, or a
//! WebSocket's frames turned into the same bytes, so one session serves both.

use std::pin::Pin;

use futures_util::Stream;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How many bytes one read of a socket takes.
const READ_CHUNK: usize = 4096;

/// Where a session's bytes come from.
pub(crate) enum Input {
    /// A byte stream (a TCP socket).
    Bytes(Box<dyn AsyncRead + Unpin>),
    /// Chunks of bytes, one per frame (a WebSocket's frames, already turned into lines).
    Chunks(Pin<Box<dyn Stream<Item = Vec<u8>>>>),
}

impl Input {
    /// The next bytes; `None` once the client has closed the connection.
    pub(crate) async fn next(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        match self {
            Input::Bytes(reader) => {
                let mut chunk = [0u8; READ_CHUNK];
                let n = reader.read(&mut chunk).await?;
                Ok((n > 0).then(|| chunk[..n].to_vec()))
            }
            Input::Chunks(frames) => Ok(frames.next().await),
        }
    }
}

/// Where a session's bytes go: lines in CRLF with telnet's own bytes between them.
pub(crate) trait Output {
    /// Writes `bytes`, waiting while the client does not read.
    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Sends what was written.
    async fn flush(&mut self) -> std::io::Result<()>;
    /// Ends the connection cleanly, once the session is over.
    async fn close(&mut self) {}
}

impl<W: AsyncWrite + Unpin> Output for W {
    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.write_all(bytes).await
    }
    async fn flush(&mut self) -> std::io::Result<()> {
        AsyncWriteExt::flush(self).await
    }
}
