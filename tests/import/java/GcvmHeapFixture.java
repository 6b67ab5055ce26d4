// A Java heap with a known shape, for the HPROF importer's real-dump test
// (tests/import/make_java_dumps.sh dumps it with jcmd). Reachable from the static
// field `chain`: 1000 ChainNode objects in a linked list, each holding one int[4]; from
// `fan`: an Object[] of 500 Leaf objects. Garbage: 2000 GarbageNode objects in a list
// whose head was dropped. After building it prints READY and waits for a line on
// stdin, so that the dumps are taken while everything above is in place.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public final class GcvmHeapFixture {
  static final class ChainNode {
    ChainNode next;
    int[] payload = new int[4];
  }

  static final class Leaf {
    long value;
  }

  static final class GarbageNode {
    GarbageNode next;
  }

  static ChainNode chain;
  static Object[] fan;

  public static void main(String[] args) throws Exception {
    for (int i = 0; i < 1000; ++i) {
      ChainNode node = new ChainNode();
      node.next = chain;
      chain = node;
    }
    fan = new Object[500];
    for (int i = 0; i < fan.length; ++i) fan[i] = new Leaf();
    GarbageNode garbage = null;
    for (int i = 0; i < 2000; ++i) {
      GarbageNode node = new GarbageNode();
      node.next = garbage;
      garbage = node;
    }
    garbage = null;
    System.out.println("READY");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in)).readLine();
  }
}
