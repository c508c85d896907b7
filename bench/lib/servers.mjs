import { execSync, spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { stopChild, waitForHttp200 } from '../../harness/children.mjs';
import { SERVER_CPU } from '../../harness/pinning.mjs';

const CLOCK_TICKS_PER_SECOND = Number(execSync('getconf CLK_TCK').toString().trim());

/**
 * A Node.js server started as a child process on the servers' core (or on `cpu`). `taskset` execs node, so the
 * child's pid is the server's own (for its RSS and its sockets).
 */
export class PinnedServer {
  constructor(name, script, args, env, { cwd, nodeArgs = [], cpu = SERVER_CPU } = {}) {
    this.name = name;
    this.output = '';
    this.child = spawn('taskset', ['-c', cpu, process.execPath, ...nodeArgs, script, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Kept for the error message if the server dies; a silent server writes nothing here.
    const keep = (chunk) => (this.output = (this.output + chunk).slice(-4000));
    this.child.stdout.on('data', keep);
    this.child.stderr.on('data', keep);
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid() {
    return this.child.pid;
  }

  /** Polls `url` until it answers 200; fails if the process exits or `timeoutMs` passes. */
  async waitUntilServing(url, timeoutMs = 60_000) {
    try {
      await waitForHttp200(url, this.exited, timeoutMs);
    } catch (failure) {
      if (failure.exited) throw new Error(`${this.name} exited (${JSON.stringify(failure.status)}) before serving:\n${this.output}`);
      throw new Error(`${this.name} did not serve ${url} within ${timeoutMs} ms:\n${this.output}`);
    }
  }

  /** Resident set size in MiB, from /proc. */
  rssMiB() {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)[1]) / 1024;
  }

  /** CPU time the process has used (user + system), in ms: what a request costs, whatever else runs. */
  cpuMs() {
    const fields = readFileSync(`/proc/${this.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  }

  /** TCP ports this process listens on (its sockets in /proc/<pid>/fd matched against /proc/net/tcp*). */
  listeningPorts() {
    const inodes = new Set();
    for (const fd of readdirSync(`/proc/${this.pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${this.pid}/fd/${fd}`));
        if (match) inodes.add(match[1]);
      } catch {
        // the descriptor closed while we looked
      }
    }
    const ports = new Set();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        const LISTEN = '0A';
        if (fields.length > 9 && fields[3] === LISTEN && inodes.has(fields[9])) {
          ports.add(parseInt(fields[1].split(':')[1], 16));
        }
      }
    }
    return [...ports];
  }

  /** SIGTERM (the app drains and exits 0), SIGKILL if it is still there after `graceMs`. */
  stop(graceMs = 20_000) {
    return stopChild(this.child, this.exited, graceMs);
  }
}
