import type { BuiltinTool, ReloadReport } from '../contract.ts';
import { errorMessage, failure, refuseWithoutAdmin, success } from './tool-results.ts';

/** reload_tools: rescans tools/ through the same path as the watcher and the HTTP API. */
export const reloadTools: BuiltinTool = {
  name: 'reload_tools',
  description:
    'Rescan the tools folder and hot-reload user tools: new and changed files load, deleted files leave, unchanged ones are skipped. ' +
    'Use it after tool files changed outside write_tool/delete_tool, or to find out why a tool file does not load. ' +
    'Returns what was added, updated and removed, and every file that failed with its reason (a failed file keeps its last good version serving).',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  kind: 'execute',
  mode: 'sequential',
  async execute(_params, context) {
    const refused = refuseWithoutAdmin(context, 'reload_tools');
    if (refused !== undefined) return refused;
    let report: ReloadReport;
    try {
      report = await context.host.reloadTools();
    } catch (error) {
      return failure(`The reload did not complete: ${errorMessage(error)}. The tools that were serving keep serving; try again, and check the service logs if it fails again.`);
    }
    return success(formatReloadReport(report), {
      added: report.added, updated: report.updated, removed: report.removed, unchanged: report.unchanged,
      errors: report.errors, durationMs: Math.round(report.durationMs),
    });
  },
};

/** The report as a model reads it: the counts first, then names, then each failure with its reason. */
export function formatReloadReport(report: ReloadReport): string {
  const changed = report.added.length + report.updated.length + report.removed.length;
  const ms = Math.round(report.durationMs);
  const lines = [changed === 0
    ? `Reloaded the tools folder in ${ms} ms: nothing changed (${report.unchanged.length} user tool${report.unchanged.length === 1 ? '' : 's'} unchanged).`
    : `Reloaded the tools folder in ${ms} ms: ${report.added.length} added, ${report.updated.length} updated, ${report.removed.length} removed, ${report.unchanged.length} unchanged.`];
  if (report.added.length > 0) lines.push(`Added: ${report.added.join(', ')}`);
  if (report.updated.length > 0) lines.push(`Updated: ${report.updated.join(', ')}`);
  if (report.removed.length > 0) lines.push(`Removed: ${report.removed.join(', ')}`);
  if (report.errors.length > 0) {
    lines.push('', `${report.errors.length} file${report.errors.length === 1 ? '' : 's'} failed to load (a tool that loaded before keeps its last good version; fix the file, then reload or use write_tool):`);
    for (const error of report.errors) {
      // The loader's messages usually start with the file (and line:column); say the file once.
      for (const line of error.message.split('\n')) lines.push(`- ${line.startsWith(`${error.file}:`) ? line : `${error.file}: ${line}`}`);
    }
  }
  return lines.join('\n');
}
