// A realistic server heap for bench/import/dump_order_service.sh: the in-memory state
// of a shop back end (customers, a product catalog, orders with their lines, indexes by
// email, time and id, an LRU cache of product views, per-customer carts), kept busy by
// worker threads that place orders, update carts and evict from the cache while the
// heap is dumped. Server heaps like this are wide and shallow (hash tables of many
// small objects), the opposite of a compiler's deep trees.
// Usage: java OrderService SCALE  (SCALE 1 = 25,000 customers); prints READY once
// the state is built, then runs until its standard input closes or says something.
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

public final class OrderService {
  enum Status { PLACED, PAID, SHIPPED, DELIVERED, RETURNED }

  record Address(String street, String city, String zip, String country) {}

  record Category(String name, Category parent) {}

  static final class Product {
    final long sku;
    final String name;
    final String description;
    final Category category;
    final List<String> tags = new ArrayList<>();
    BigDecimal price;
    int stock;

    Product(long sku, String name, String description, Category category, BigDecimal price) {
      this.sku = sku;
      this.name = name;
      this.description = description;
      this.category = category;
      this.price = price;
    }
  }

  record OrderLine(Product product, int quantity, BigDecimal unitPrice) {}

  static final class Order {
    final long id;
    final Customer customer;
    final Instant placed;
    final List<OrderLine> lines = new ArrayList<>(4);
    final EnumMap<Status, Instant> history = new EnumMap<>(Status.class);
    Status status = Status.PLACED;

    Order(long id, Customer customer, Instant placed) {
      this.id = id;
      this.customer = customer;
      this.placed = placed;
      history.put(Status.PLACED, placed);
    }
  }

  static final class Customer {
    final long id;
    final String name;
    final String email;
    final Address address;
    final List<Order> orders = new ArrayList<>();
    final Map<String, String> preferences = new HashMap<>();
    final Map<Product, Integer> cart = new LinkedHashMap<>();

    Customer(long id, String name, String email, Address address) {
      this.id = id;
      this.name = name;
      this.email = email;
      this.address = address;
    }
  }

  static final class LruCache<K, V> extends LinkedHashMap<K, V> {
    private final int capacity;

    LruCache(int capacity) {
      super(16, 0.75f, true);
      this.capacity = capacity;
    }

    @Override
    protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
      return size() > capacity;
    }
  }

  static final String[] WORDS = {"red", "blue", "steel", "oak", "linen", "smart", "compact", "pro", "eco", "classic",
      "wireless", "organic", "travel", "kitchen", "garden", "outdoor", "vintage", "ultra", "mini", "family"};
  static final String[] CITIES = {"Lyon", "Porto", "Graz", "Leeds", "Turku", "Gdansk", "Utrecht", "Bilbao", "Brno"};

  final List<Category> categories = new ArrayList<>();
  final Map<Long, Product> products = new HashMap<>();
  final List<Product> catalog = new ArrayList<>();
  final ConcurrentHashMap<Long, Customer> customers = new ConcurrentHashMap<>();
  final Map<String, Customer> byEmail = new HashMap<>();
  final ConcurrentHashMap<Long, Order> orders = new ConcurrentHashMap<>();
  final ConcurrentSkipListMap<Instant, List<Order>> byTime = new ConcurrentSkipListMap<>();
  final Map<String, List<Product>> byTag = new TreeMap<>();
  final LruCache<Long, Product> recentViews = new LruCache<>(10_000);
  final AtomicLong nextOrder = new AtomicLong();

  static String words(Random random, int n) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < n; ++i) text.append(i == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
    return text.toString();
  }

  void build(int scale, Random random) {
    for (int i = 0; i < 200; ++i)
      categories.add(new Category("category-" + i, i < 20 ? null : categories.get(random.nextInt(20))));
    for (long sku = 0; sku < 5_000L * scale; ++sku) {
      Product p = new Product(sku, words(random, 3), words(random, 12), categories.get(random.nextInt(200)),
          BigDecimal.valueOf(100 + random.nextInt(100_000), 2));
      p.stock = random.nextInt(500);
      for (int t = random.nextInt(4); t >= 0; --t) {
        String tag = WORDS[random.nextInt(WORDS.length)];
        p.tags.add(tag);
        byTag.computeIfAbsent(tag, k -> new ArrayList<>()).add(p);
      }
      products.put(sku, p);
      catalog.add(p);
    }
    for (long id = 0; id < 25_000L * scale; ++id) {
      Address address = new Address(random.nextInt(300) + " " + words(random, 1) + " street",
          CITIES[random.nextInt(CITIES.length)], String.valueOf(10_000 + random.nextInt(89_999)), "EU");
      Customer c = new Customer(id, words(random, 2), "user" + id + "@example.org", address);
      c.preferences.put("language", random.nextBoolean() ? "en" : "fr");
      if (random.nextInt(3) == 0) c.preferences.put("newsletter", "weekly");
      customers.put(id, c);
      byEmail.put(c.email, c);
      for (int k = random.nextInt(4); k > 0; --k) placeOrder(c, random, Instant.ofEpochSecond(1_700_000_000L + id * 7 + k));
    }
  }

  void placeOrder(Customer c, Random random, Instant when) {
    Order order = new Order(nextOrder.incrementAndGet(), c, when);
    for (int l = 1 + random.nextInt(4); l > 0; --l) {
      Product p = catalog.get(random.nextInt(catalog.size()));
      order.lines.add(new OrderLine(p, 1 + random.nextInt(3), p.price));
    }
    if (random.nextBoolean()) {
      order.status = Status.PAID;
      order.history.put(Status.PAID, when.plusSeconds(60));
    }
    synchronized (c) {
      c.orders.add(order);
    }
    orders.put(order.id, order);
    List<Order> sameTime = byTime.computeIfAbsent(when, k -> new ArrayList<>());
    synchronized (sameTime) {
      sameTime.add(order);
    }
  }

  void work(long seed) {
    Random random = new Random(seed);
    long tick = 0;
    while (!Thread.currentThread().isInterrupted()) {
      Customer c = customers.get((long) random.nextInt(customers.size()));
      Product p = catalog.get(random.nextInt(catalog.size()));
      synchronized (recentViews) {
        recentViews.put(p.sku, p);
      }
      synchronized (c) {
        c.cart.merge(p, 1, Integer::sum);
        if (c.cart.size() > 5) c.cart.clear();
      }
      if (++tick % 256 == 0) placeOrder(c, random, Instant.ofEpochSecond(1_800_000_000L + tick));
      if (tick % 64 == 0) {
        try {
          Thread.sleep(1);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  public static void main(String[] args) throws Exception {
    int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
    OrderService service = new OrderService();
    service.build(scale, new Random(42));
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < 4; ++i) {
      long seed = i;
      Thread t = new Thread(() -> service.work(seed), "worker-" + i);
      t.setDaemon(true);
      t.start();
      workers.add(t);
    }
    System.out.println("READY " + service.customers.size() + " customers, " + service.orders.size() + " orders");
    System.out.flush();
    System.in.read();
    for (Thread t : workers) t.interrupt();
  }
}
