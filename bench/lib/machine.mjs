import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** What the figures ran on. nproc --all: this process is pinned to one core, plain nproc would say 1. */
export function describeMachine() {
  return {
    cpus: execSync('nproc --all').toString().trim(),
    model: /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown',
    node: process.version,
  };
}

function cpuTimes() {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq + steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

/**
 * The share of the machine's CPU busy over `ms` while our own servers sit idle: load from someone else,
 * which would disturb the figures (the lock only keeps out loads that take it too).
 */
export async function foreignLoad(ms = 2_000) {
  const before = cpuTimes();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = cpuTimes();
  return (after.busy - before.busy) / Math.max(1, after.total - before.total);
}

/** The machine's load averages as uptime prints them, to print beside the figures. */
export function uptime() {
  return execSync('uptime').toString().trim();
}
