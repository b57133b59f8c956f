import type { ProtocolContext } from "@holdfast/protocol";

/** Retirement runs on the shared protocol context of `@holdfast/dataset`. */
export type RetirementContext = ProtocolContext;
