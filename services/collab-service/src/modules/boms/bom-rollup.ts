import type { CostRollup, CurrencyRates } from '@hwp/contracts';
import { type ExpandedTree, presentNode } from './bom-tree';

/**
 * The multi-level cost rollup of an expanded tree: totals per currency and, when the workspace's
 * rates convert every currency, their sum in the base currency (else the currencies left over).
 */
export function rollupOf(
  bomId: string,
  assemblyPartNumber: string,
  tree: ExpandedTree,
  rates: CurrencyRates | null,
): CostRollup {
  const unconverted = rates
    ? tree.totals
        .filter((t) => t.currency !== rates.base && !(t.currency && rates.rates[t.currency]))
        .map((t) => t.currency ?? 'none')
    : [];
  const converted =
    rates && unconverted.length === 0
      ? {
          currency: rates.base,
          amount:
            Math.round(
              tree.totals.reduce(
                (sum, t) =>
                  sum + t.amount * (t.currency === rates.base ? 1 : rates.rates[t.currency as string]),
                0,
              ) * 1e6,
            ) / 1e6,
        }
      : null;
  return {
    bomId,
    assemblyPartNumber,
    totals: tree.totals,
    converted,
    unconverted,
    complete: tree.missingCosts.length === 0,
    missingCosts: tree.missingCosts,
    lines: tree.top.map(presentNode),
  };
}
