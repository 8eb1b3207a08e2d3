/**
 * The parts of blessed-contrib 4.11 (yaronn/blessed-contrib, MIT) the dashboard uses;
 * the package ships no type definitions. Shapes follow its lib/widget sources.
 */
declare module 'blessed-contrib' {
  import type { Widgets } from 'blessed';

  /** Options every widget factory takes (blessed box options plus the widget's own). */
  type WidgetOptions = Widgets.BoxOptions & Record<string, unknown>;

  /** A widget factory as `grid.set` calls it. */
  type Factory<T> = (options: WidgetOptions) => T;

  /** lib/layout/grid.js: a rows × cols layout on a screen (cells are percentages). */
  class Grid {
    constructor(options: { rows: number; cols: number; screen: Widgets.Screen; hideBorder?: boolean; color?: string });
    set<T>(row: number, col: number, rowSpan: number, colSpan: number, factory: Factory<T>, options: WidgetOptions): T;
  }

  /** One line of a line chart: x labels, y values, legend title, colour. */
  export interface LineSeries {
    title: string;
    x: string[];
    y: number[];
    style?: { line?: string | number[] };
  }

  export interface LineChart extends Widgets.BoxElement {
    setData(series: LineSeries[]): void;
  }

  export interface Gauge extends Widgets.BoxElement {
    setPercent(percent: number): void;
  }

  export interface BarChart extends Widgets.BoxElement {
    setData(data: { titles: string[]; data: number[] }): void;
  }

  const contrib: {
    grid: typeof Grid;
    line: Factory<LineChart>;
    gauge: Factory<Gauge>;
    bar: Factory<BarChart>;
  };
  export default contrib;
}
