/**
 * The current date and time in a time zone, as ISO 8601 with the UTC offset.
 *
 * Named zones (IANA, "Europe/Paris") use Intl, which Paddock's isolates and Deno both provide;
 * where Intl is missing, UTC and fixed offsets ("+05:30") still work and a named zone says so.
 * Needs no permission.
 */

export const name = "get_current_datetime";

export const description =
  "The current date and time as an ISO 8601 timestamp with its UTC offset, plus the weekday, in a given time zone (default UTC). " +
  "Use it whenever you need today's date, the current time, or the local time somewhere else; never guess the date.";

export const parameters = {
  type: "object",
  properties: {
    timezone: {
      type: "string",
      maxLength: 64,
      description: 'An IANA time zone such as "Europe/Paris" or "America/New_York", or a UTC offset such as "+05:30". Default: UTC.',
    },
  },
  additionalProperties: false,
};

export const permissions = {};

interface ToolResult {
  content: string;
  isError?: boolean;
  metadata?: Record<string, unknown>;
}

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const UTC_NAMES = /^(utc|gmt|z|etc\/utc|etc\/gmt)$/i;
const OFFSET = /^(?:utc|gmt)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i;

export default function execute(params: { timezone?: string }): ToolResult {
  const zone = (params.timezone ?? "").trim() || "UTC";
  // Whole seconds: the timestamp and its parts come from the same instant.
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);

  let offsetMinutes: number;
  let zoneName: string;
  const fixed = OFFSET.exec(zone);
  if (UTC_NAMES.test(zone)) {
    offsetMinutes = 0;
    zoneName = "UTC";
  } else if (fixed !== null) {
    const hours = Number(fixed[2]);
    const minutes = Number(fixed[3] ?? "0");
    if (hours > 14 || minutes > 59) return unknownZone(zone);
    offsetMinutes = (fixed[1] === "-" ? -1 : 1) * (hours * 60 + minutes);
    zoneName = `UTC${formatOffset(offsetMinutes)}`;
  } else if (typeof Intl === "undefined" || typeof Intl.DateTimeFormat !== "function") {
    return {
      content: `This runtime has no Intl, so named time zones such as "${zone}" are unavailable; pass a UTC offset such as "+02:00" instead.`,
      isError: true,
    };
  } else {
    let format: Intl.DateTimeFormat;
    try {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone: zone, hourCycle: "h23",
        year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
      });
    } catch {
      return unknownZone(zone);
    }
    // ICU may canonicalize to an older alias ("Asia/Kolkata" -> "Asia/Calcutta"): keep the asked-for
    // name, in ICU's spelling when they differ only in case.
    const resolved = format.resolvedOptions().timeZone;
    zoneName = resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
    const parts: Record<string, number> = {};
    for (const part of format.formatToParts(now)) if (part.type !== "literal") parts[part.type] = Number(part.value);
    // The wall-clock reading in that zone, read as if it were UTC, minus the instant = the offset.
    const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
    offsetMinutes = Math.round((wall - now.getTime()) / 60_000);
  }

  const local = new Date(now.getTime() + offsetMinutes * 60_000);
  const iso = `${local.toISOString().slice(0, 19)}${zoneName === "UTC" ? "Z" : formatOffset(offsetMinutes)}`;
  const weekday = WEEKDAYS[local.getUTCDay()];
  return {
    content: `${iso} (${weekday}, ${zoneName})`,
    metadata: { iso, timezone: zoneName, offset: formatOffset(offsetMinutes), weekday, utc: now.toISOString(), unixMs: now.getTime() },
  };
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const absolute = Math.abs(minutes);
  return `${sign}${String(Math.floor(absolute / 60)).padStart(2, "0")}:${String(absolute % 60).padStart(2, "0")}`;
}

function unknownZone(zone: string): ToolResult {
  return {
    content: `Unknown time zone "${zone}". Use an IANA name such as "Europe/Paris" or "America/New_York", or a UTC offset such as "+05:30".`,
    isError: true,
  };
}
