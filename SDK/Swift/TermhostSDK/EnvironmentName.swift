/// What may name an environment variable that termhost.environment/1 answers for: a shell
/// identifier (letters, digits, '_', not starting with a digit), at most 256 bytes. Variables
/// with other names (bash's exported functions, `BASH_FUNC_f%%`) are never carried to the
/// daemon: no plugin can ask for them.
public enum EnvironmentName {
    public static let maximumBytes = 256

    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumBytes, !isDigit(first) else { return false }
        return bytes.allSatisfy { isDigit($0) || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "_") }
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}
