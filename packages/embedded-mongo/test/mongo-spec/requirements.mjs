// Which tests apply to the engine: the unified format's runOnRequirements evaluated for what the engine presents (a
// standalone MongoDB 7.0.0 without authentication, not serverless, without client-side encryption), and the parts of
// the format this runner does not run (fail points). Everything that passes these checks is "applicable".

export const SERVER = { version: [7, 0, 0], topology: 'single', auth: false };

/** The schema major version this runner understands (1.x). */
const SCHEMA_MAJOR = 1;

const parseVersion = (s) => {
  const parts = String(s).split('.').map((p) => Number.parseInt(p, 10));
  return [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0].map((n) => (Number.isFinite(n) ? n : 0));
};

const compareVersions = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Why one runOnRequirement is not met by the engine; null when it is. `parameters` answers getParameter. */
async function unmet(req, parameters) {
  if (req.minServerVersion && compareVersions(SERVER.version, parseVersion(req.minServerVersion)) < 0) return `needs server >= ${req.minServerVersion}`;
  if (req.maxServerVersion && compareVersions(SERVER.version, parseVersion(req.maxServerVersion)) > 0) return `needs server <= ${req.maxServerVersion}`;
  if (req.topologies && !req.topologies.includes(SERVER.topology)) return `needs topology ${req.topologies.join('/')}`;
  if (req.serverless === 'require') return 'needs serverless';
  if (req.auth === true) return 'needs authentication';
  if (req.authMechanism) return `needs auth mechanism ${req.authMechanism}`;
  if (req.csfle !== undefined && req.csfle !== false) return 'needs client-side encryption';
  for (const [name, wanted] of Object.entries(req.serverParameters ?? {})) {
    const actual = await parameters(name);
    const same = actual !== undefined && (typeof wanted === 'object' ? Number(wanted) === Number(actual) : wanted === actual || Number(wanted) === Number(actual));
    if (!same) return `needs server parameter ${name}=${JSON.stringify(wanted)}`;
  }
  return null;
}

/** Null when one of `reqs` is met (or there are none), else the reason of the first unmet one. */
export async function requirementsUnmet(reqs, parameters) {
  if (!reqs || reqs.length === 0) return null;
  let first = null;
  for (const req of reqs) {
    const reason = await unmet(req, parameters);
    if (!reason) return null;
    first ??= reason;
  }
  return first;
}

export function schemaUnsupported(file) {
  const major = parseVersion(file.schemaVersion)[0];
  return major === SCHEMA_MAJOR ? null : `schema version ${file.schemaVersion} not supported`;
}

const FAIL_POINT_OPERATIONS = new Set(['failPoint', 'targetedFailPoint']);

/** Operations the drivers' API (mongodb 7) no longer has; a runner for this driver skips them, as the format allows. */
const NOT_IN_DRIVER = new Set(['mapReduce', 'deleteByName', 'renameByName']);

/** Tests no server can pass through the Node.js driver 7, because of what the driver does, with the reason. */
const DRIVER_LIMITATIONS = new Map([
  ['download when final chunk is missing', 'the Node.js driver does not detect a missing final GridFS chunk (NODE-6279)'],
  ...['insertOne', 'insertMany', 'bulkWrite'].map((op) => [`inserting _id with type null via ${op}`, 'the Node.js driver replaces a null _id with an ObjectId before sending']),
]);

/** Why a test is not run although its requirements are met (fail points, operations the driver lacks); else null. */
export function unrunnable(test) {
  if (DRIVER_LIMITATIONS.has(test.description)) return DRIVER_LIMITATIONS.get(test.description);
  const names = [];
  const walk = (ops) => {
    for (const op of ops ?? []) {
      names.push(op.name);
      walk(op.arguments?.callback);
    }
  };
  walk(test.operations);
  if (names.some((n) => FAIL_POINT_OPERATIONS.has(n))) return 'uses fail points';
  const missing = names.find((n) => NOT_IN_DRIVER.has(n));
  return missing ? `operation ${missing} is not in the Node.js driver 7` : null;
}
