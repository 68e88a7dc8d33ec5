package dev.parley.buildtools;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * Super types by internal name, for computing stack map frames: a jar's classes read from
 * their bytes (never loaded into this JVM, where they could clash with the build's own
 * copies), the JDK's from the platform class loader.
 */
final class ClassHierarchy {
    private static final String OBJECT = "java/lang/Object";

    private record Node(String superName, List<String> interfaces, boolean isInterface) {
    }

    private final Function<String, byte[]> classFiles;
    private final Map<String, Node> nodes = new HashMap<>();

    /** @param classFiles the class file of an internal name, or null when the jar has none */
    ClassHierarchy(Function<String, byte[]> classFiles) {
        this.classFiles = classFiles;
    }

    /**
     * The nearest common super class, as {@code ClassWriter.getCommonSuperClass} answers it:
     * one of the two if it is a super type of the other, Object if either is an interface
     * (the verifier takes interfaces as Object), else the closest shared super class.
     */
    String commonSuperClass(String a, String b) {
        if (isSubtype(b, a)) {
            return a;
        }
        if (isSubtype(a, b)) {
            return b;
        }
        if (node(a).isInterface() || node(b).isInterface()) {
            return OBJECT;
        }
        String common = a;
        do {
            common = node(common).superName();
        } while (!isSubtype(b, common));
        return common;
    }

    private boolean isSubtype(String sub, String sup) {
        Set<String> seen = new HashSet<>();
        ArrayDeque<String> pending = new ArrayDeque<>(List.of(sub));
        while (!pending.isEmpty()) {
            String type = pending.pop();
            if (type.equals(sup)) {
                return true;
            }
            if (seen.add(type)) {
                Node node = node(type);
                if (node.superName() != null) {
                    pending.push(node.superName());
                }
                node.interfaces().forEach(pending::push);
            }
        }
        return false;
    }

    private Node node(String name) {
        return nodes.computeIfAbsent(name, this::read);
    }

    private Node read(String name) {
        byte[] bytes = classFiles.apply(name);
        if (bytes != null) {
            ClassReader reader = new ClassReader(bytes);
            return new Node(reader.getSuperName(), List.of(reader.getInterfaces()),
                    (reader.getAccess() & Opcodes.ACC_INTERFACE) != 0);
        }
        Class<?> type;
        try {
            type = Class.forName(name.replace('/', '.'), false, ClassLoader.getPlatformClassLoader());
        } catch (ClassNotFoundException notInTheJdk) {
            throw new TypeNotPresentException(name, notInTheJdk);
        }
        return new Node(type.getSuperclass() == null ? null : Type.getInternalName(type.getSuperclass()),
                Stream.of(type.getInterfaces()).map(Type::getInternalName).toList(), type.isInterface());
    }
}
