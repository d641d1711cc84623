import Glibc

extension LibSSH2 {
    /// A function of the libssh2 this plugin loaded that not every libssh2 has (one 1.11 added,
    /// or one of Termhost's patches), cast to its C type; nil when this libssh2 lacks it. Found
    /// by its soname among the libraries already loaded (RTLD_NOLOAD), since a plugin's
    /// libraries are not in the global scope that `RTLD_DEFAULT` searches. The process loads
    /// one libssh2 (the SSH and SFTP plugins share sessions), whichever version that is.
    public static func optionalFunction<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let library = dlopen("libssh2.so.1", RTLD_LAZY | RTLD_NOLOAD) else { return nil }
        // Loaded already and kept by this plugin's own dependency: closing our reference leaves it mapped.
        defer { dlclose(library) }
        return dlsym(library, name).map { unsafeBitCast($0, to: type) }
    }
}
