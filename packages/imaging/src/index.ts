/** Local CPU image tools (filled in by the imaging work). */
export {};
