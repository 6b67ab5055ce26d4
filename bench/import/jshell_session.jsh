// A JShell session with realistic state, for bench/import/dump_jshell.sh: someone
// exploring the JDK's class library interactively. Snippets define records and
// methods, walk every class file of the runtime image (jrt:/), group and index them,
// and load the reflection data of java.util's public classes.
import java.net.URI;
import java.nio.file.*;
import java.util.*;
import java.util.function.*;
import java.util.stream.*;
import java.lang.reflect.*;

record ClassInfo(String module, String pkg, String name, long bytes) {
  String simpleName() { return name.substring(name.lastIndexOf('.') + 1); }
}

FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));

ClassInfo info(Path p) {
  String module = p.getName(1).toString();
  String rel = p.subpath(2, p.getNameCount()).toString().replace('/', '.');
  String name = rel.substring(0, rel.length() - ".class".length());
  int dot = name.lastIndexOf('.');
  long bytes;
  try { bytes = Files.size(p); } catch (Exception e) { bytes = -1; }
  return new ClassInfo(module, dot < 0 ? "" : name.substring(0, dot), name, bytes);
}

List<ClassInfo> classes;
try (Stream<Path> files = Files.walk(jrt.getPath("/modules"))) {
  classes = files.filter(p -> p.toString().endsWith(".class") && p.getNameCount() > 2).map(p -> info(p)).collect(Collectors.toList());
}

Map<String, List<ClassInfo>> byPackage = classes.stream().collect(Collectors.groupingBy(ClassInfo::pkg));
Map<String, Long> bytesByModule = classes.stream().collect(Collectors.groupingBy(ClassInfo::module, TreeMap::new, Collectors.summingLong(ClassInfo::bytes)));
List<ClassInfo> largest = classes.stream().sorted(Comparator.comparingLong(ClassInfo::bytes).reversed()).limit(200).toList();

List<String> words(String simpleName) {
  return Arrays.stream(simpleName.split("(?<=[a-z])(?=[A-Z])|\\$")).filter(w -> !w.isEmpty()).map(String::toLowerCase).toList();
}

Map<String, Set<String>> index = new HashMap<>();
for (ClassInfo c : classes) for (String w : words(c.simpleName())) index.computeIfAbsent(w, k -> new TreeSet<>()).add(c.name());

List<Map.Entry<String, Set<String>>> commonWords = index.entrySet().stream().sorted((a, b) -> b.getValue().size() - a.getValue().size()).limit(50).toList();

record MethodInfo(Class<?> owner, Method method, List<String> parameterTypes) {}
List<MethodInfo> utilMethods = new ArrayList<>();
for (ClassInfo c : byPackage.getOrDefault("java.util", List.of())) {
  try {
    Class<?> k = Class.forName(c.name());
    if (!Modifier.isPublic(k.getModifiers())) continue;
    for (Method m : k.getDeclaredMethods())
      utilMethods.add(new MethodInfo(k, m, Arrays.stream(m.getParameterTypes()).map(Class::getName).toList()));
  } catch (Throwable t) {}
}

Map<Class<?>, List<MethodInfo>> methodsByOwner = utilMethods.stream().collect(Collectors.groupingBy(MethodInfo::owner));
String summary = String.format("%d classes in %d packages, %d index words, %d java.util methods", classes.size(), byPackage.size(), index.size(), utilMethods.size());
System.out.println("READY " + summary);
