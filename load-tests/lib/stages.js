// Helpers for ramping-arrival-rate stages: build a staircase and tell which offered rate
// was in force at a moment of the run (to name the rate at which a stress test broke).

/** Parses k6-style durations such as "30s", "2m", "1h30m" into seconds. */
export function seconds(d) {
  if (typeof d === 'number') return d;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let m;
  let matched = '';
  while ((m = re.exec(d)) !== null) {
    matched += m[0];
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
  }
  if (matched !== d) throw new Error(`"${d}" is not a duration such as 30s or 2m`);
  return total;
}

/** Stairs from `from` to `to` in `steps` steps: a short ramp then a hold at each rate. */
export function staircase(from, to, steps, hold, ramp = '5s') {
  const stages = [];
  for (let i = 1; i <= steps; i++) {
    const target = Math.round((from + ((to - from) * i) / steps) * 100) / 100;
    stages.push({ target, duration: ramp }, { target, duration: hold });
  }
  return stages;
}

/** Offered rate (per timeUnit) at `atSeconds` into a ramping-arrival-rate scenario. */
export function rateAt(startRate, stages, atSeconds) {
  let t = 0;
  let rate = startRate;
  for (const s of stages) {
    const d = seconds(s.duration);
    if (atSeconds <= t + d) return d === 0 ? s.target : rate + ((s.target - rate) * (atSeconds - t)) / d;
    t += d;
    rate = s.target;
  }
  return rate;
}

export function totalSeconds(stages) {
  return stages.reduce((a, s) => a + seconds(s.duration), 0);
}
