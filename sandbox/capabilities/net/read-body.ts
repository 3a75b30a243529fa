/**
 * Reads a response body under a hard byte cap, decoding gzip and br as Deno's fetch does (Deno 2
 * leaves deflate and zstd bodies as sent, and so does this).
 * Both the bytes on the wire and the decoded bytes are counted, so neither a decompression bomb
 * nor an endless stream of empty gzip members gets past the cap. On overflow the pipeline is torn
 * down, which destroys the response stream and with it the socket.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createBrotliDecompress, createGunzip } from 'node:zlib';
import type { Transform } from 'node:stream';

/** The body went past the cap; reading stopped there. */
export class BodyLimitExceeded extends Error {}

/** The body did not decode with its Content-Encoding. */
export class BodyDecodeFailed extends Error {}

function decoderFor(contentEncoding: string | undefined): Transform | undefined {
  // Lenient flush, as browsers and undici do: a body cut short after its last full block still decodes.
  switch (contentEncoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip({ flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH });
    case 'br':
      return createBrotliDecompress({
        flush: constants.BROTLI_OPERATION_FLUSH,
        finishFlush: constants.BROTLI_OPERATION_FLUSH,
      });
    default:
      return undefined; // identity, or a coding Deno does not decode either: the bytes as sent
  }
}

function counted(maxBytes: number) {
  return async function* (source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    let total = 0;
    for await (const chunk of source) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new BodyLimitExceeded();
      yield chunk;
    }
  };
}

/**
 * The whole body as one exact-size Uint8Array (never a view into Node's shared Buffer pool, whose
 * other bytes must not cross into the isolate).
 */
export async function readCappedBody(body: Readable, contentEncoding: string | undefined, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  const collect = async (source: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of source) {
      chunks.push(chunk);
      total += chunk.byteLength;
    }
  };
  const decoder = decoderFor(contentEncoding);
  try {
    if (decoder === undefined) await pipeline(body, counted(maxBytes), collect);
    else await pipeline(body, counted(maxBytes), decoder, counted(maxBytes), collect);
  } catch (error) {
    // pipeline rejects with the first failure; zlib's own carry Z_* (zlib) or ERR__* (brotli) codes.
    if (decoder !== undefined && /^(Z_|ERR__)/.test(String((error as { code?: unknown } | null)?.code))) {
      throw new BodyDecodeFailed();
    }
    throw error;
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
