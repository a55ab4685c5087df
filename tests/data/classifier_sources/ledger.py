"""Functions written for perfmodel's classifier tests (no external source).

They exercise the inference paths: short and long docs, no doc, and a body big enough to
be pruned by the tree encoder's node cap.
"""

import hashlib
import socket
import zlib


class Ledger:
    def checksum(self, rows):
        """Hash every row with SHA-256 and fold the digests into one hex string."""
        digest = hashlib.sha256()
        for row in rows:
            digest.update(repr(row).encode())
        return digest.hexdigest()

    def pack(self, payload):
        return zlib.compress(payload, 6)

    def fetch(self, host, port, size):
        """Open a TCP connection to the ledger server, send a request line and read the
        reply until the peer closes the socket or the requested number of bytes has
        arrived. Every read blocks on the network; the loop does nothing else but append
        the received chunks to a list, which is joined once at the end so that the copy
        happens a single time. Timeouts are left to the caller, who sets them on the
        socket module's default before calling this method, as the ledger tools do."""
        conn = socket.create_connection((host, port))
        try:
            conn.sendall(b"GET ledger\n")
            chunks = []
            received = 0
            while received < size:
                data = conn.recv(65536)
                if not data:
                    break
                chunks.append(data)
                received += len(data)
            return b"".join(chunks)
        finally:
            conn.close()

    def save(self, path, lines):
        """Write the ledger lines to a file on disk, one per line."""
        with open(path, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line + "\n")

    def reconcile(self, left, right, tolerance):
        """Compare two ledgers entry by entry and report the differences."""
        out = []
        for key in sorted(set(left) | set(right)):
            a = left.get(key, 0)
            b = right.get(key, 0)
            if abs(a - b) > tolerance:
                out.append((key, a, b, a - b))
            elif key.startswith("tmp") and a and b:
                out.append((key, a, b, 0))
            if len(out) > 1000:
                break
        totals = {"left": sum(left.values()), "right": sum(right.values())}
        totals["diff"] = totals["left"] - totals["right"]
        ratios = [a / b for _, a, b, _ in out if b]
        mean = sum(ratios) / len(ratios) if ratios else 0.0
        spread = max(ratios) - min(ratios) if ratios else 0.0
        buckets = {}
        for key, a, b, d in out:
            prefix = key.split(".")[0]
            entry = buckets.setdefault(prefix, [0, 0.0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += a
            entry[2] += b
            entry[3] += d
        ordered = sorted(buckets.items(), key=lambda kv: (-kv[1][0], kv[0]))
        worst = ordered[:10]
        lines = [f"{k}: {n} entries, {a:.2f} vs {b:.2f} ({d:+.2f})" for k, (n, a, b, d) in worst]
        lines.append(f"total {totals['left']:.2f} vs {totals['right']:.2f}")
        lines.append(f"mean ratio {mean:.4f}, spread {spread:.4f}")
        for k, (n, a, b, d) in ordered[10:]:
            if n > 3 and abs(d) > tolerance * 10:
                lines.append(f"also {k}: {n} entries ({d:+.2f})")
            elif n > 1:
                lines.append(f"minor {k}: {n}")
        summary = "\n".join(lines)
        return out, totals, summary

    def render(self, entries, width):
        """Lay the ledger out as fixed-width text columns for a terminal report."""
        header = ["key", "left", "right", "delta", "ratio", "flag"]
        rows = [header]
        for key, a, b, d in entries:
            ratio = a / b if b else float("inf")
            flag = "!" if abs(d) > width else ("~" if abs(d) > width / 2 else "")
            rows.append([key, f"{a:.2f}", f"{b:.2f}", f"{d:+.2f}", f"{ratio:.3f}", flag])
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines = []
        for r in rows:
            cells = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
            lines.append("  ".join(cells).rstrip())
        rule = "-" * min(width, max(len(x) for x in lines))
        lines.insert(1, rule)
        totals = [sum(float(r[1]) for r in rows[1:]), sum(float(r[2]) for r in rows[1:])]
        lines.append(rule)
        lines.append(f"{'total':<{widths[0]}}  {totals[0]:.2f}  {totals[1]:.2f}")
        flagged = [r[0] for r in rows[1:] if r[5] == "!"]
        if flagged:
            lines.append("flagged: " + ", ".join(flagged[:20]))
            if len(flagged) > 20:
                lines.append(f"... and {len(flagged) - 20} more")
        half = [r[0] for r in rows[1:] if r[5] == "~"]
        if half:
            lines.append("near the limit: " + ", ".join(half[:20]))
        counts = {}
        for r in rows[1:]:
            counts[r[5] or "ok"] = counts.get(r[5] or "ok", 0) + 1
        lines.append(" ".join(f"{k}={v}" for k, v in sorted(counts.items())))
        longest = max(rows[1:], key=lambda r: len(r[0]), default=None)
        if longest is not None:
            lines.append(f"longest key: {longest[0]} ({len(longest[0])} characters)")
        return "\n".join(lines)
