package dev.parley.buildtools;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ClassFileUpgrade on a real Java 5 library: picocli's own jar, as the build rewrites it in
 * parley.jar. Its classes are checked by the JVM itself, loaded into a fresh class loader, where
 * a version 52 class file is verified from its frames with no fallback to the old verifier.
 */
class ClassFileUpgradeTest {
    private static final String COMMAND_LINE = "picocli/CommandLine.class";

    @TempDir
    static Path dir;
    private static Map<String, byte[]> before;
    private static Path upgraded;
    private static int count;

    @BeforeAll
    static void upgradePicocli() throws Exception {
        Path picocli = Path.of(CommandLine.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        before = entries(picocli);
        upgraded = Files.copy(picocli, dir.resolve("picocli.jar"));
        count = ClassFileUpgrade.upgradeJar(upgraded, List.of("picocli/"));
    }

    @Test
    void everyPicocliClassBecomesVersion52AndEveryOtherEntryKeepsItsBytesAndPlace() throws IOException {
        assertEquals(49, ClassFileUpgrade.majorVersion(before.get(COMMAND_LINE)), "the input is a Java 5 class file");
        Map<String, byte[]> after = entries(upgraded);
        assertEquals(new ArrayList<>(before.keySet()), new ArrayList<>(after.keySet()), "same entries, same order");
        int classes = 0;
        for (Map.Entry<String, byte[]> entry : after.entrySet()) {
            String name = entry.getKey();
            if (name.startsWith("picocli/") && name.endsWith(".class")) {
                assertEquals(ClassFileUpgrade.TARGET_VERSION, ClassFileUpgrade.majorVersion(entry.getValue()), name);
                classes++;
            } else {
                assertArrayEquals(before.get(name), entry.getValue(), name);
            }
        }
        assertEquals(classes, count);
        assertTrue(classes > 100, "picocli has well over a hundred classes: " + classes);
    }

    @Test
    void everyMethodThatBranchesHasFrames() throws IOException {
        Map<String, byte[]> after = entries(upgraded);
        List<String> withoutFrames = new ArrayList<>();
        new ClassReader(after.get(COMMAND_LINE)).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                             String[] exceptions) {
                return new MethodVisitor(Opcodes.ASM9) {
                    boolean branches;
                    boolean frames;

                    @Override
                    public void visitJumpInsn(int opcode, Label label) {
                        branches = true;
                    }

                    @Override
                    public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
                        branches = true;
                    }

                    @Override
                    public void visitFrame(int type, int numLocal, Object[] local, int numStack, Object[] stack) {
                        frames = true;
                    }

                    @Override
                    public void visitEnd() {
                        if (branches && !frames) {
                            withoutFrames.add(name + descriptor);
                        }
                    }
                };
            }
        }, 0);
        assertEquals(List.of(), withoutFrames);
    }

    @Test
    void theJvmVerifiesEveryUpgradedClassAndPicocliStillWorks() throws Exception {
        try (URLClassLoader loader = new URLClassLoader(new URL[] {upgraded.toUri().toURL()},
                ClassLoader.getPlatformClassLoader())) {
            for (String name : entries(upgraded).keySet()) {
                if (name.startsWith("picocli/") && name.endsWith(".class")) {
                    Class.forName(name.replace('/', '.').replace(".class", ""), true, loader); // links, so verifies
                }
            }
            Class<?> spec = loader.loadClass("picocli.CommandLine$Model$CommandSpec");
            Class<?> option = loader.loadClass("picocli.CommandLine$Model$OptionSpec");
            Object command = spec.getMethod("create").invoke(null);
            spec.getMethod("name", String.class).invoke(command, "send");
            Object builder = option.getMethod("builder", String.class, String[].class).invoke(null, "--to", new String[0]);
            Method build = builder.getClass().getMethod("build");
            build.setAccessible(true);
            spec.getMethod("addOption", option).invoke(command, build.invoke(builder));
            Object commandLine = loader.loadClass("picocli.CommandLine").getConstructor(Object.class).newInstance(command);
            String usage = (String) commandLine.getClass().getMethod("getUsageMessage").invoke(commandLine);
            assertTrue(usage.contains("Usage: send") && usage.contains("--to"), usage);
        }
    }

    /** Not a vacuous check: a version 52 header alone, without frames, is refused by the same verifier. */
    @Test
    void aNewerVersionWithoutFramesFailsVerification() throws Exception {
        byte[] bumped = before.get(COMMAND_LINE).clone();
        bumped[6] = 0;
        bumped[7] = (byte) ClassFileUpgrade.TARGET_VERSION;
        try (URLClassLoader loader = new URLClassLoader(new URL[] {upgraded.toUri().toURL()}, null) {
            @Override
            protected Class<?> findClass(String name) throws ClassNotFoundException {
                if (name.equals("picocli.CommandLine")) {
                    return defineClass(name, bumped, 0, bumped.length);
                }
                return super.findClass(name);
            }
        }) {
            assertThrows(VerifyError.class, () -> Class.forName("picocli.CommandLine", true, loader));
        }
    }

    @Test
    void aJarWithNothingOldIsLeftUntouched() throws IOException {
        byte[] jar = Files.readAllBytes(upgraded);
        assertEquals(0, ClassFileUpgrade.upgradeJar(upgraded, List.of("picocli/")));
        assertArrayEquals(jar, Files.readAllBytes(upgraded));
    }

    private static Map<String, byte[]> entries(Path jar) throws IOException {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            for (ZipEntry entry : Collections.list(zip.entries())) {
                entries.put(entry.getName(), zip.getInputStream(entry).readAllBytes());
            }
        }
        return entries;
    }
}
