// Test input for perfmodel's corpus extraction (written for the tests).
package com.example.codec;

/** Adler-style rolling checksum. */
public final class Checksum {
    private static final int MOD = 65521;
    private int a = 1;
    private int b;

    /** Adds {@code len} bytes of {@code buf} to the checksum. */
    public void update(byte[] buf, int off, int len) {
        for (int i = off; i < off + len; i++) {
            a = (a + (buf[i] & 0xff)) % MOD;
            b = (b + a) % MOD;
        }
    }

    /** The current value. */
    public long value() {
        return ((long) b << 16) | a;
    }

    /** Same loop as {@link #update}: a duplicate body the builder must drop. */
    public void updateAgain(byte[] buf, int off, int len) {
        for (int i = off; i < off + len; i++) {
            a = (a + (buf[i] & 0xff)) % MOD;
            b = (b + a) % MOD;
        }
    }
}
