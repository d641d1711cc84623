import Foundation
import Glibc

/// The libssh2 a built library loads (as the dynamic linker resolves it for that file): the
/// tests expect what that libssh2 can do. A build with TERMHOST_SYSTEM_LIBSSH2=1 loads the
/// system's (1.10 on Debian 12), any other the 1.11.1 that Scripts/libssh2.sh built and patched.
public enum LoadedLibSSH2 {
    /// Its version, asked of the library itself.
    public static func version(of library: String) throws -> String {
        let symbol = try function("libssh2_version", of: library)
        typealias Version = @convention(c) (Int32) -> UnsafePointer<CChar>?
        guard let symbol, let text = unsafeBitCast(symbol, to: Version.self)(0) else {
            throw Shell.Failure(description: "the libssh2 of \(library) has no version")
        }
        return String(cString: text)
    }

    /// Whether its version is at least `major.minor`; true when the version cannot be read, so
    /// a test gated on it runs (and fails visibly) rather than being skipped.
    public static func atLeast(_ major: Int, _ minor: Int, of library: String) -> Bool {
        guard let parts = try? version(of: library).split(separator: ".").compactMap({ Int($0) }), parts.count >= 2 else { return true }
        return (parts[0], parts[1]) >= (major, minor)
    }

    /// Whether it exports `name` (a function one of Termhost's libssh2 patches adds).
    public static func exports(_ name: String, of library: String) throws -> Bool {
        try function(name, of: library) != nil
    }

    private static func function(_ name: String, of library: String) throws -> UnsafeMutableRawPointer? {
        let ldd = try Shell.run("/usr/bin/ldd", [library])
        guard let line = ldd.stdout.split(separator: "\n").first(where: { $0.contains("libssh2.so") }),
              let path = line.split(separator: " ").first(where: { $0.hasPrefix("/") }) else {
            throw Shell.Failure(description: "ldd shows no libssh2 for \(library): \(ldd.output)")
        }
        guard let handle = dlopen(String(path), RTLD_NOW | RTLD_LOCAL) else {
            throw Shell.Failure(description: "cannot load \(path): \(String(cString: dlerror()))")
        }
        return dlsym(handle, name)
    }
}
