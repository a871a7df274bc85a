//! What a session reads from and writes to (docs/serve.md §9.3): a TCP socket's bytes, or a
//! WebSocket's frames turned into the same bytes, so one session serves both.

use std::pin::Pin;

use futures_util::Stream;
use futures_util::StreamExt;
use futures_util::stream::Fuse;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How many bytes one read of a socket takes.
const READ_CHUNK: usize = 4096;

/// What one read of a connection gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Bytes of a stream: a line that starts here may end in a later chunk.
    Bytes(Vec<u8>),
    /// One message of a transport that carries lines in messages (a WebSocket frame's text):
    /// its end ends the line it leaves open (docs/serve.md §9.2).
    Message(Vec<u8>),
}

impl Chunk {
    /// How many bytes it holds.
    pub(crate) fn len(&self) -> usize {
        match self {
            Chunk::Bytes(bytes) | Chunk::Message(bytes) => bytes.len(),
        }
    }
}

/// Where a session's bytes come from.
pub(crate) enum Input {
    /// A byte stream (a TCP socket).
    Bytes(Box<dyn AsyncRead + Unpin>),
    /// Chunks, one per frame (a WebSocket's). Fused: a session asks again after the end (it
    /// drains what a closing client still sends), and a stream asked after its end may panic.
    Chunks(Fuse<Pin<Box<dyn Stream<Item = Chunk>>>>),
}

impl Input {
    /// Input from a stream of chunks.
    pub(crate) fn chunks(chunks: impl Stream<Item = Chunk> + 'static) -> Self {
        let chunks: Pin<Box<dyn Stream<Item = Chunk>>> = Box::pin(chunks);
        Input::Chunks(chunks.fuse())
    }

    /// The next chunk; `None` once the client has closed the connection.
    pub(crate) async fn next(&mut self) -> std::io::Result<Option<Chunk>> {
        match self {
            Input::Bytes(reader) => {
                let mut chunk = [0u8; READ_CHUNK];
                let n = reader.read(&mut chunk).await?;
                Ok((n > 0).then(|| Chunk::Bytes(chunk[..n].to_vec())))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_chunk_stream_asked_again_after_its_end_says_ended_again() {
        // `unfold` panics when polled after its end: what a WebSocket's frames are built on,
        // and what the closing drain asks after `run` has seen the end (docs/serve.md §11.8).
        let frames = futures_util::stream::unfold(0, |n| async move {
            (n < 1).then(|| (Chunk::Message(b"who".to_vec()), n + 1))
        });
        let mut input = Input::chunks(frames);
        assert_eq!(
            input.next().await.unwrap(),
            Some(Chunk::Message(b"who".to_vec()))
        );
        assert_eq!(input.next().await.unwrap(), None);
        assert_eq!(input.next().await.unwrap(), None);
    }
}
