// A large Java heap for the import benchmark (run_import_bench.sh): N Node objects
// (two references and an int each) held by chunked Node[] arrays, each node pointing
// at the next one and at a pseudo-random earlier one, plus one byte[64] per 16 nodes.
// Prints READY and waits for a line on stdin so that jcmd can dump it.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public final class BigHeap {
  static final class Node {
    Node next;
    Node random;
    int value;
  }

  static Object[] chunks;

  public static void main(String[] args) throws Exception {
    final int n = Integer.parseInt(args[0]);
    final int chunk = 1 << 16;
    chunks = new Object[(n + chunk - 1) / chunk];
    Node previous = null;
    long seed = 42;
    Node[] all = null;
    for (int i = 0; i < n; ++i) {
      if (i % chunk == 0) {
        all = new Node[Math.min(chunk, n - i)];
        chunks[i / chunk] = all;
      }
      Node node = new Node();
      node.value = i;
      if (previous != null) previous.next = node;
      seed = seed * 6364136223846793005L + 1442695040888963407L;
      node.random = all[(int) ((seed >>> 33) % (i % chunk + 1)) % all.length];
      all[i % chunk] = node;
      previous = node;
    }
    byte[][] blobs = new byte[n / 16][];
    for (int i = 0; i < blobs.length; ++i) blobs[i] = new byte[64];
    Object[] keep = {chunks, blobs};
    System.out.println("READY " + keep.length);
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in)).readLine();
  }
}
