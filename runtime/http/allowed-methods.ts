import type { RouterRoute } from 'hono/types';

/**
 * The methods the app's routes answer on `path`, for a 405 with `Allow` instead of a 404 when the
 * path exists under another method. Hono's patterns: `:name` is one segment (`:name{regex}` too,
 * taken as one segment), `*` anything. Middleware (method ALL) is not a route.
 */
export function allowedMethods(routes: readonly RouterRoute[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    if (route.method === 'ALL' || !patternOf(route.path).test(path)) continue;
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
  }
  return [...methods].sort();
}

const patterns = new Map<string, RegExp>();

function patternOf(routePath: string): RegExp {
  let pattern = patterns.get(routePath);
  if (pattern === undefined) {
    const source = routePath.split('/').map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }).join('/');
    pattern = new RegExp(`^${source}$`);
    patterns.set(routePath, pattern);
  }
  return pattern;
}
