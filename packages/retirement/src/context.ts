import type { ProtocolContext } from "@holdfast/dataset";

/** Retirement runs on the shared protocol context of `@holdfast/dataset`. */
export type RetirementContext = ProtocolContext;
