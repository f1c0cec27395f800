/**
 * AG Grid Community setup shared by the app's grids: module registration (once) and the dark
 * theme matching the app's palette (Theming API, no CSS file imports).
 */

import { AllCommunityModule, ModuleRegistry, colorSchemeDarkBlue, themeQuartz } from 'ag-grid-community';

ModuleRegistry.registerModules([AllCommunityModule]);

/** The trading-desk grid theme: dense rows, tabular figures, the app's dark blue palette. */
export const gridTheme = themeQuartz.withPart(colorSchemeDarkBlue).withParams({
  backgroundColor: '#0d1520',
  foregroundColor: '#d6e2f0',
  headerBackgroundColor: '#111c2a',
  headerTextColor: '#8fa3ba',
  borderColor: '#1e2b3b',
  rowHoverColor: '#15263a',
  accentColor: '#38bdf8',
  valueChangeValueHighlightBackgroundColor: 'rgba(56, 189, 248, 0.28)',
  fontFamily: 'inherit',
  fontSize: 13,
  headerFontSize: 12,
  rowHeight: 30,
  headerHeight: 32,
  spacing: 6,
  wrapperBorderRadius: 6,
});
