/**
 * The diagnosis of one node (issue 17): `diagnoseSnapshot` and its contract. What the fleet
 * (issue 18), `nodescope diagnose` and the TUI import.
 */
export { diagnoseRules, diagnoseSnapshot, finishDiagnosis, type DiagnoseOptions, type RulesDiagnosis } from './diagnose.js';
export { diagnoseExitStatus, DIAGNOSE_LAYERS, VERDICTS } from './types.js';
export type { Diagnosis, DiagnosisHeader, DnsLayer, DiagnoseLayer, Evidence, Finding, FindingCode, ServiceDiagnosis, Severity, Verdict } from './types.js';
export type { ExpectedFrontend, ExpectedService } from './expect.js';
export { endpointKey, frontendKey } from './frontends.js';
export { resolveDiagnoseClient, type DiagnoseClient } from './client.js';
