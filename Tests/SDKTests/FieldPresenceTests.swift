import Foundation
import Testing
import TestSupport

/// TERMHOST_HAS_FIELD and TERMHOST_ABI_MINOR_NEEDED (version.h), as a C plugin author uses them:
/// compiled with cc -std=c99 -pedantic and run.
@Suite struct FieldPresenceTests {
    func compileAndRun(_ dir: TemporaryDirectory, _ source: String, defines: [String] = []) throws -> Shell.Result {
        let file = dir.write("check.c", source)
        let exe = dir.path + "/check"
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", Paths.sdkInclude,
                                               "-o", exe, file] + defines.map { "-D" + $0 })
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        return try Shell.run(exe, [])
    }

    @Test func hasFieldComparesStructSizeWithTheMembersEnd() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let r = try compileAndRun(dir, """
        #include <stdio.h>
        #include <termhost/termhost.h>
        int main(void) {
           termhost_host_interact_t in;
           const termhost_host_interact_t *none = NULL;
           size_t end = offsetof(termhost_host_interact_t, can_prompt) + sizeof in.can_prompt;
           in.struct_size = (uint32_t)end;
           printf("%d", TERMHOST_HAS_FIELD(&in, termhost_host_interact_t, can_prompt));
           in.struct_size = (uint32_t)end - 1;   /* a 1.0 host: the table ends before it */
           printf(" %d", TERMHOST_HAS_FIELD(&in, termhost_host_interact_t, can_prompt));
           printf(" %d", TERMHOST_HAS_FIELD(&in, termhost_host_interact_t, notify));
           printf(" %d\\n", TERMHOST_HAS_FIELD(none, termhost_host_interact_t, notify));
           return 0;
        }
        """)
        #expect(r.stdout == "1 0 1 0\n", "\(r.output)")
    }

    @Test func abiInitDeclaresTheMinorNeeded() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let source = """
        #include <stdio.h>
        #include <termhost/termhost.h>
        static const termhost_version_t v = TERMHOST_ABI_INIT;
        int main(void) { printf("%u.%u %d\\n", v.major, v.minor, TERMHOST_ABI_MINOR); return 0; }
        """
        let headers = try compileAndRun(dir, source).stdout.split(separator: " ")
        #expect(headers.count == 2 && headers[0] == "1.\(headers[1].dropLast())", "by default the headers' own minor")
        let older = try compileAndRun(dir, source, defines: ["TERMHOST_ABI_MINOR_NEEDED=0"]).stdout
        #expect(older.hasPrefix("1.0 "), "\(older)")
    }
}
