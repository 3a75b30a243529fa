/**
 * Current weather for a city, from Open-Meteo (free, no API key): the city is geocoded first, then
 * its current conditions are read.
 *
 * The API base URL is configurable through the WEATHER_API_BASE secret (an operator setting, read
 * with Deno.env.get when granted), for a mirror or a self-hosted Open-Meteo. Both calls then go to
 * that base; add its host to `permissions.net` too, or the grant refuses it. Without the secret
 * (or the env grant), the public Open-Meteo hosts are used.
 *
 *   npm run deno-run -- tools/weather.ts --params '{"city":"Oslo"}' \
 *     --allow-net=api.open-meteo.com,geocoding-api.open-meteo.com
 */

export const name = "weather";

export const description =
  "Current weather for a city: temperature, feels-like temperature, conditions, humidity and wind, from Open-Meteo. " +
  "Use it when asked about the weather or temperature somewhere right now (not for forecasts or past weather).";

export const parameters = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1, maxLength: 100, description: 'The city, e.g. "Oslo" or "San Francisco".' },
    units: { type: "string", enum: ["metric", "imperial"], description: "metric (°C, km/h) or imperial (°F, mph). Default: metric." },
  },
  required: ["city"],
  additionalProperties: false,
};

export const permissions = {
  net: ["api.open-meteo.com", "geocoding-api.open-meteo.com"],
  env: ["WEATHER_API_BASE"],
};

interface ToolContext {
  signal: AbortSignal;
  update(text: string): void | Promise<void>;
}

interface ToolResult {
  content: string;
  isError?: boolean;
  metadata?: Record<string, unknown>;
}

interface Place {
  name: string;
  latitude: number;
  longitude: number;
  country?: string;
  admin1?: string;
  timezone?: string;
}

interface Current {
  time: string;
  temperature_2m: number;
  apparent_temperature: number;
  relative_humidity_2m: number;
  weather_code: number;
  wind_speed_10m: number;
  wind_direction_10m: number;
}

const DEFAULT_FORECAST_BASE = "https://api.open-meteo.com";
const DEFAULT_GEOCODING_BASE = "https://geocoding-api.open-meteo.com";

/** WMO weather interpretation codes, as Open-Meteo documents them. */
const CONDITIONS: Record<number, string> = {
  0: "clear sky", 1: "mainly clear", 2: "partly cloudy", 3: "overcast",
  45: "fog", 48: "depositing rime fog",
  51: "light drizzle", 53: "moderate drizzle", 55: "dense drizzle", 56: "light freezing drizzle", 57: "dense freezing drizzle",
  61: "slight rain", 63: "moderate rain", 65: "heavy rain", 66: "light freezing rain", 67: "heavy freezing rain",
  71: "slight snowfall", 73: "moderate snowfall", 75: "heavy snowfall", 77: "snow grains",
  80: "slight rain showers", 81: "moderate rain showers", 82: "violent rain showers", 85: "slight snow showers", 86: "heavy snow showers",
  95: "thunderstorm", 96: "thunderstorm with slight hail", 99: "thunderstorm with heavy hail",
};

const COMPASS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

export default async function execute(params: { city: string; units?: "metric" | "imperial" }, ctx: ToolContext): Promise<ToolResult> {
  const base = await configuredBase();
  const imperial = params.units === "imperial";

  const geocoding = new URL(`${base ?? DEFAULT_GEOCODING_BASE}/v1/search`);
  geocoding.search = new URLSearchParams({ name: params.city, count: "1", language: "en", format: "json" }).toString();
  const found = await getJson(geocoding, ctx.signal) as { results?: Place[] };
  const place = found.results?.[0];
  if (place === undefined) {
    return { content: `No place named "${params.city}" was found. Check the spelling, or try the nearest larger city.`, isError: true };
  }

  const forecast = new URL(`${base ?? DEFAULT_FORECAST_BASE}/v1/forecast`);
  forecast.search = new URLSearchParams({
    latitude: String(place.latitude),
    longitude: String(place.longitude),
    current: "temperature_2m,apparent_temperature,relative_humidity_2m,weather_code,wind_speed_10m,wind_direction_10m",
    timezone: "auto",
    ...(imperial ? { temperature_unit: "fahrenheit", wind_speed_unit: "mph" } : {}),
  }).toString();
  const weather = await getJson(forecast, ctx.signal) as { current?: Current; current_units?: Record<string, string> };
  const current = weather.current;
  if (current === undefined) throw new Error("The weather service answered without current conditions.");

  const temperatureUnit = weather.current_units?.temperature_2m ?? (imperial ? "°F" : "°C");
  const windUnit = weather.current_units?.wind_speed_10m ?? (imperial ? "mph" : "km/h");
  const where = [...new Set([place.name, place.admin1, place.country].filter((part) => typeof part === "string" && part !== ""))].join(", ");
  const conditions = CONDITIONS[current.weather_code] ?? `weather code ${current.weather_code}`;
  const direction = COMPASS[Math.round((((current.wind_direction_10m % 360) + 360) % 360) / 45) % 8];
  return {
    content:
      `${where}: ${current.temperature_2m} ${temperatureUnit} (feels like ${current.apparent_temperature} ${temperatureUnit}), ${conditions}; ` +
      `humidity ${current.relative_humidity_2m} %, wind ${current.wind_speed_10m} ${windUnit} from the ${direction}. ` +
      `Observed ${current.time} local time${place.timezone === undefined ? "" : ` (${place.timezone})`}.`,
    metadata: { place, current, units: weather.current_units ?? {} },
  };
}

/** WEATHER_API_BASE when the call may read it and the operator set it; otherwise the public hosts. */
async function configuredBase(): Promise<string | undefined> {
  const status = await Deno.permissions.query({ name: "env", variable: "WEATHER_API_BASE" });
  if (status.state !== "granted") return undefined;
  const value = Deno.env.get("WEATHER_API_BASE")?.trim();
  if (value === undefined || value === "") return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`WEATHER_API_BASE is not a URL: "${value}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new TypeError(`WEATHER_API_BASE must be an http(s) URL, not "${url.protocol}"`);
  url.search = "";
  url.hash = "";
  return url.href.replace(/\/+$/, "");
}

async function getJson(url: URL, signal: AbortSignal): Promise<unknown> {
  const response = await fetch(url, { signal, headers: { accept: "application/json" } });
  if (!response.ok) {
    const body = (await response.text()).slice(0, 200);
    throw new Error(`The weather service answered ${response.status} ${response.statusText} for ${url.pathname}${body === "" ? "" : `: ${body}`}`);
  }
  return await response.json();
}
