import CTermhost
import Foundation
import Testing
import TestSupport

/// The ABI headers are the contract with third parties: each must compile on its own as strict
/// C99 and the umbrella header as C++, with no warnings.
@Suite struct HeaderTests {
    static var headers: [String] {
        let base = Paths.sdkInclude
        let found = FileManager.default.enumerator(atPath: base)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".h") } ?? []
        return found.sorted().map { base + "/" + $0 }
    }

    @Test func everyHeaderCompilesAloneAsStrictC99() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(Self.headers.count >= 13)
        for header in Self.headers {
            let source = dir.write("check.c", "#include \"\(header)\"\nint main(void) { return 0; }\n")
            let r = try Shell.run("/usr/bin/cc", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-o", dir.path + "/check.o", source])
            #expect(r.status == 0, "\(header): \(r.output)")
        }
    }

    @Test func umbrellaHeaderCompilesAsCPlusPlusWithCLinkage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let source = dir.write("check.cpp", """
        #include <termhost/termhost.h>
        // A C++ plugin can define the entry point with C linkage from the header alone.
        static const termhost_plugin_entry_t entry = { TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t),
                                                       "org.example.cpp", "1.0.0", nullptr, nullptr, nullptr };
        extern "C" TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
        """)
        let r = try Shell.run("/usr/bin/g++", ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", Paths.sdkInclude,
                                               "-fPIC", "-shared", "-o", dir.path + "/libcpp.so", source])
        #expect(r.status == 0, "\(r.output)")
        let symbols = try Shell.run("/usr/bin/nm", ["-D", "--defined-only", dir.path + "/libcpp.so"]).stdout
        #expect(symbols.contains(" T termhost_plugin_entry\n"), "the entry must not be C++-mangled")
    }

    @Test func testPluginsDeclareTheABIOfTheseHeaders() {
        // Fixtures.abi goes into every test plugin's manifest; the loader refuses a manifest
        // whose abi is not the one its library was built against (these headers' minor).
        #expect(Fixtures.abi == "\(TERMHOST_ABI_MAJOR).\(TERMHOST_ABI_MINOR)")
    }
}
