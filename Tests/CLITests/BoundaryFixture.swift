import Foundation
import TestSupport

/// Tests/Fixtures/boundary-plugin.c built into a plugin directory: a plugin that hands the host
/// bad values (lying struct sizes, invalid service arguments).
enum BoundaryFixture {
    static var source: String { Paths.root + "/Tests/Fixtures/boundary-plugin.c" }

    /// The host's ABI minor, read from the headers it was built with (others may raise it).
    static var hostMinor: Int {
        let header = (try? String(contentsOfFile: Paths.sdkInclude + "/termhost/version.h", encoding: .utf8)) ?? ""
        let line = header.split(separator: "\n").first { $0.hasPrefix("#define TERMHOST_ABI_MINOR ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 1
    }

    /// Compiles the fixture with `defines` into `<parent>/<dirName>` with a manifest declaring
    /// `abi` (default: the host's); returns the directory. `include` overrides the SDK headers used.
    @discardableResult
    static func build(in parent: String, dirName: String = "boundary", id: String = "org.test.boundary",
                      command: String = "bnd", defines: [String] = [], abi: String? = nil,
                      include: String = Paths.sdkInclude) throws -> String {
        let dir = parent + "/" + dirName
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/lib\(dirName).so"
        let args = ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fPIC", "-shared",
                    "-I", include, "-o", lib, source, "-DPLUGIN_ID=\"\(id)\"", "-DCOMMAND_NAME=\"\(command)\""]
            + defines.map { "-D" + $0 }
        let cc = try Shell.run("/usr/bin/cc", args)
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        let manifest = dir + "/manifest.json"
        _ = FileManager.default.createFile(atPath: manifest, contents: Data("""
        { "id": "\(id)", "version": "1.0.0", "abi": "\(abi ?? "1.\(hostMinor)")", "library": "lib\(dirName).so",
          "features": [ { "id": "\(id)", "version": "1.0.0", "order": 100,
                          "commands": [ { "name": "\(command)", "summary": "hand the host bad values" } ] } ] }
        """.utf8))
        return dir
    }
}
