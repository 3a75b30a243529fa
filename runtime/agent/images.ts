/**
 * Images a tool result carries, by convention in its metadata (the image_view built-in and any
 * other tool): `metadata.image` or `metadata.images[]`, each `{ mediaType | mimeType, data }`
 * (base64) or `{ url }` (a data: URL). They go to the model context only, as a synthetic user
 * message; the display history, events and API responses list their media types instead.
 */

export interface ToolImage {
  readonly mediaType: string;
  /** A data: URL. */
  readonly url: string;
}

const MEDIA_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DATA_URL = /^data:(image\/[a-z+.-]+);base64,([A-Za-z0-9+/]+={0,2})$/;
/** Per image, in base64 characters (about 15 MB decoded). */
export const MAX_IMAGE_CHARS = 20_000_000;

export function imagesOf(metadata: Readonly<Record<string, unknown>> | null): ToolImage[] {
  if (metadata === null) return [];
  const candidates = [metadata['image'], ...(Array.isArray(metadata['images']) ? metadata['images'] as unknown[] : [])];
  return candidates.flatMap((candidate) => {
    const image = toImage(candidate);
    return image === undefined ? [] : [image];
  });
}

/** The metadata without image payloads (for events, the display history and API responses). */
export function withoutImages(metadata: Readonly<Record<string, unknown>> | null): Readonly<Record<string, unknown>> | null {
  if (metadata === null || !('image' in metadata || 'images' in metadata)) return metadata;
  const { image: _image, images: _images, ...rest } = metadata;
  return rest;
}

function toImage(candidate: unknown): ToolImage | undefined {
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const record = candidate as Record<string, unknown>;
  if (typeof record['url'] === 'string') {
    const match = DATA_URL.exec(record['url']);
    if (match?.[1] === undefined || !MEDIA_TYPES.has(match[1]) || record['url'].length > MAX_IMAGE_CHARS) return undefined;
    return { mediaType: match[1], url: record['url'] };
  }
  const mediaType = record['mediaType'] ?? record['mimeType'];
  const data = record['data'];
  if (typeof mediaType !== 'string' || !MEDIA_TYPES.has(mediaType) || typeof data !== 'string') return undefined;
  if (data.length > MAX_IMAGE_CHARS || !BASE64.test(data)) return undefined;
  return { mediaType, url: `data:${mediaType};base64,${data}` };
}
