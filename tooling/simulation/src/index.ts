// The simulation's entry points for tests and tools: run one seeded schedule, its profiles,
// and the deterministic scheduler and gated store it is built from.
export {
  DEFAULT_SIMULATION,
  type PlantedFault,
  profileConfig,
  type SimulationConfig,
  type SimulationResult,
  STRESS_SIMULATION,
  type Violation,
} from "./config.js";
export { type FaultRates, GatedStore, SimulatedCrash } from "./gated-store.js";
export { Scheduler, seededRandom, settle } from "./scheduler.js";
export { runSimulation } from "./simulation.js";
