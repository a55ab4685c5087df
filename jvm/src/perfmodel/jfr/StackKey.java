package perfmodel.jfr;

import java.util.Arrays;

/**
 * Value key of a stack in a sample file's dictionary: identical frames and lines share one
 * entry. Both writers of the line format use it (SampleDump for JFR recordings, the plugin's
 * TaskSampler for its own samples).
 */
public final class StackKey {
  private final int[] ids;
  private final int[] lines;
  private final boolean truncated;
  private final int hash;

  public StackKey(int[] ids, int[] lines, boolean truncated) {
    this.ids = ids;
    this.lines = lines;
    this.truncated = truncated;
    this.hash = 31 * (31 * Arrays.hashCode(ids) + Arrays.hashCode(lines)) + (truncated ? 1 : 0);
  }

  /** The dictionary line for this stack under {@code id}: {@code K id frames lines truncated}. */
  public String line(int id) {
    StringBuilder out = new StringBuilder(16 + 12 * ids.length);
    out.append("K\t").append(id).append('\t');
    join(out, ids);
    out.append('\t');
    join(out, lines);
    return out.append('\t').append(truncated ? '1' : '0').append('\n').toString();
  }

  private static void join(StringBuilder out, int[] values) {
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append(values[i]);
    }
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof StackKey)) {
      return false;
    }
    StackKey other = (StackKey) o;
    return truncated == other.truncated
        && Arrays.equals(ids, other.ids)
        && Arrays.equals(lines, other.lines);
  }
}
