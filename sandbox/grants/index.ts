/** The grants module's public surface: the Grant model, its resolution, the checks and Deno's messages. */
export { InvalidGrantError, NO_GRANT, PERMISSION_NAMES, normalizeGrant } from './grant.ts';
export type { Grant, GrantValue, NormalizeOptions, PermissionName, PermissionSet, PermissionValue } from './grant.ts';
export { intersectGrants, resolveGrant } from './intersect.ts';
export {
  checkEnv, checkNet, checkPathAccess, checkRead, checkWrite, displayPath, isLiteralAddressGranted, netTarget,
} from './check.ts';
export type { CheckedPath, PathAccess, PathCheck, PathCheckOptions } from './check.ts';
export { notCapable } from './not-capable.ts';
export { permissionState } from './permission-state.ts';
export type { PermissionStateName, PermissionStatus } from './permission-state.ts';
export { resolveRealPath, resolveRealPathSync } from './real-path.ts';
export type { ResolvedPath, ResolveOptions } from './real-path.ts';
