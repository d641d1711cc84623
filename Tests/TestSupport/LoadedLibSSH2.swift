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
