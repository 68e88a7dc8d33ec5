package dev.parley.buildtools;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collections;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.JSRInlinerAdapter;

/**
 * Rewrites a jar's class files older than version 50 under given packages as Java 8 class
 * files (52) with stack map frames, in place; every other entry keeps its bytes.
 *
 * <p>Why: JDK 25's AOT cache keeps no class that only the old (type-inferring) verifier can
 * check, which is every class file before version 50. picocli ships Java 5 class files, so
 * without this each one-shot command loads, verifies and runs all of picocli cold.
 *
 * <p>Usage: {@code ClassFileUpgrade JAR PACKAGE_PREFIX...}, e.g. {@code target/parley.jar picocli/}.
 */
public final class ClassFileUpgrade {
    /** The first version whose verifier requires frames and never falls back to the old one is 51; 52 is Java 8. */
    static final int TARGET_VERSION = Opcodes.V1_8;
    /** Version 50 (Java 6) is the first the new verifier checks, with frames. */
    private static final int FIRST_VERSION_WITH_FRAMES = 50;

    private ClassFileUpgrade() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) { // thrown, not System.exit: exec:java runs this in Maven's JVM
            throw new IllegalArgumentException("usage: ClassFileUpgrade JAR PACKAGE_PREFIX...");
        }
        // silent, as `mvn -q` (the ./parley script's build) is: the tests and the jar itself show what it did
        upgradeJar(Path.of(args[0]), List.of(args).subList(1, args.length));
    }

    /**
     * Upgrades the jar in place, written aside and moved over it whole; a jar with nothing to
     * upgrade is left untouched. Entries keep their order, times and compression method.
     *
     * @return how many class files were upgraded
     */
    static int upgradeJar(Path jar, List<String> prefixes) throws IOException {
        Path rewritten = jar.resolveSibling(jar.getFileName() + ".upgrading");
        int upgraded = 0;
        try (ZipFile in = new ZipFile(jar.toFile());
             ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(rewritten))) {
            ClassHierarchy hierarchy = new ClassHierarchy(name -> entryBytes(in, name + ".class"));
            out.setComment(in.getComment());
            for (ZipEntry entry : Collections.list(in.entries())) {
                byte[] bytes = entryBytes(in, entry);
                ZipEntry copy = new ZipEntry(entry);
                copy.setCompressedSize(-1); // compressed anew
                if (isOld(entry.getName(), prefixes, bytes)) {
                    bytes = upgrade(bytes, hierarchy);
                    copy.setSize(bytes.length);
                    CRC32 crc = new CRC32();
                    crc.update(bytes);
                    copy.setCrc(crc.getValue());
                    upgraded++;
                }
                out.putNextEntry(copy);
                out.write(bytes);
                out.closeEntry();
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(rewritten);
            throw e;
        }
        if (upgraded == 0) {
            Files.delete(rewritten);
        } else {
            Files.move(rewritten, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        return upgraded;
    }

    /** A version 52 copy of an older class file, its frames computed, jsr/ret inlined (forbidden from 51 on). */
    static byte[] upgrade(byte[] classFile, ClassHierarchy hierarchy) {
        ClassReader reader = new ClassReader(classFile);
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_FRAMES) {
            @Override
            protected String getCommonSuperClass(String a, String b) {
                return hierarchy.commonSuperClass(a, b);
            }
        };
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public void visit(int version, int access, String name, String signature, String superName,
                              String[] interfaces) {
                super.visit(TARGET_VERSION, access, name, signature, superName, interfaces);
            }

            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                             String[] exceptions) {
                return new JSRInlinerAdapter(super.visitMethod(access, name, descriptor, signature, exceptions),
                        access, name, descriptor, signature, exceptions);
            }
        }, ClassReader.SKIP_FRAMES);
        return writer.toByteArray();
    }

    /** The class file's major version (bytes 6-7 after the magic), or -1 if it is not one. */
    static int majorVersion(byte[] bytes) {
        boolean classFile = bytes.length >= 8 && (bytes[0] & 0xff) == 0xca && (bytes[1] & 0xff) == 0xfe
                && (bytes[2] & 0xff) == 0xba && (bytes[3] & 0xff) == 0xbe;
        return classFile ? (bytes[6] & 0xff) << 8 | (bytes[7] & 0xff) : -1;
    }

    private static boolean isOld(String name, List<String> prefixes, byte[] bytes) {
        int major = majorVersion(bytes);
        return name.endsWith(".class") && prefixes.stream().anyMatch(name::startsWith)
                && major >= 0 && major < FIRST_VERSION_WITH_FRAMES;
    }

    private static byte[] entryBytes(ZipFile zip, String name) {
        ZipEntry entry = zip.getEntry(name);
        try {
            return entry == null ? null : entryBytes(zip, entry);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] entryBytes(ZipFile zip, ZipEntry entry) throws IOException {
        try (InputStream in = zip.getInputStream(entry)) {
            return in.readAllBytes();
        }
    }
}
