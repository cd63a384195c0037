package io.github.redislock.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate made for one test run, and a {@code redis-server} that serves TLS with it. The certificate is for
 * {@code 127.0.0.1} and {@code localhost}, signed by a CA made alongside it, with the {@code openssl} command when it
 * is on the PATH, else self-signed with the JDK's {@code keytool} (then it is its own CA).
 *
 * @param dir where the PEM files are
 * @param caCertificate the certificate a client trusts ({@code spring.ssl.bundle.pem.*.truststore.certificate})
 * @param certificate the server's certificate
 * @param privateKey the server's private key (PKCS#8 PEM)
 */
public record TestTls(Path dir, Path caCertificate, Path certificate, Path privateKey) {

    /** Makes the certificate and its key in a new temporary directory. */
    public static TestTls generate() {
        try {
            Path dir = Files.createTempDirectory("redis-lock-tls-");
            return onPath("openssl") ? withOpenssl(dir) : withKeytool(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts a {@code redis-server} that also listens with TLS on {@link RedisServerProcess#freePort() a free port},
     * with this certificate and without asking clients for one ({@code --tls-auth-clients no}); its plain port stays
     * open on loopback for the test's own checks.
     *
     * @throws org.opentest4j.TestAbortedException when the {@code redis-server} was built without TLS
     */
    public TlsRedis startRedis() {
        int tlsPort = RedisServerProcess.freePort();
        List<String> args = List.of("--tls-port", Integer.toString(tlsPort), "--tls-cert-file", certificate.toString(),
                "--tls-key-file", privateKey.toString(), "--tls-ca-cert-file", caCertificate.toString(),
                "--tls-auth-clients", "no");
        try {
            return new TlsRedis(RedisServerProcess.start(args), tlsPort);
        } catch (IllegalStateException e) {
            if (String.valueOf(e.getMessage()).contains("tls-port")) {
                throw new org.opentest4j.TestAbortedException(RedisServerProcess.binary()
                        + " was built without TLS support (BUILD_TLS=yes), so the TLS tests cannot run: " + e.getMessage());
            }
            throw e;
        }
    }

    /** A {@code redis-server} with a TLS port; close it to stop it. */
    public record TlsRedis(RedisServerProcess server, int tlsPort) implements AutoCloseable {

        @Override
        public void close() {
            server.close();
        }
    }

    private static TestTls withOpenssl(Path dir) {
        Path ca = dir.resolve("ca.crt");
        Path caKey = dir.resolve("ca.key");
        Path cert = dir.resolve("redis.crt");
        Path key = dir.resolve("redis.key");
        Path csr = dir.resolve("redis.csr");
        Path ext = dir.resolve("san.ext");
        try {
            Files.writeString(ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        run(dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey.toString(), "-out",
                ca.toString(), "-days", "2", "-subj", "/CN=redis-lock test CA");
        run(dir, "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out", csr.toString(),
                "-subj", "/CN=localhost");
        run(dir, "openssl", "x509", "-req", "-in", csr.toString(), "-CA", ca.toString(), "-CAkey", caKey.toString(),
                "-CAcreateserial", "-out", cert.toString(), "-days", "2", "-extfile", ext.toString());
        return new TestTls(dir, ca, cert, key);
    }

    private static TestTls withKeytool(Path dir) {
        Path store = dir.resolve("redis.p12");
        String password = "changeit";
        run(dir, "keytool", "-genkeypair", "-alias", "redis", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=localhost",
                "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-keystore", store.toString(), "-storetype",
                "PKCS12", "-storepass", password, "-keypass", password);
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore keyStore = KeyStore.getInstance("PKCS12");
            keyStore.load(in, password.toCharArray());
            Certificate certificate = keyStore.getCertificate("redis");
            Path cert = dir.resolve("redis.crt");
            Path key = dir.resolve("redis.key");
            Files.writeString(cert, pem("CERTIFICATE", certificate.getEncoded()));
            Files.writeString(key, pem("PRIVATE KEY", keyStore.getKey("redis", password.toCharArray()).getEncoded()));
            return new TestTls(dir, cert, cert, key);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("could not read the certificate keytool made", e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static boolean onPath(String command) {
        for (String entry : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(entry, command))) {
                return true;
            }
        }
        return false;
    }

    private static void run(Path dir, String... command) {
        List<String> cmd = new ArrayList<>(List.of(command));
        try {
            Process process = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + cmd.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
