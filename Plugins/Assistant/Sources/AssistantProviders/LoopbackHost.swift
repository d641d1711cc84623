import Foundation

/// Whether a URL's host is this machine: 127.0.0.0/8, ::1 (bracketed or not) or localhost. Plain
/// http goes only there (a model endpoint, a notification hook); anywhere else its bytes would
/// cross a network in the clear. Foundation only, so fuzz targets compile it as it is.
public enum LoopbackHost {
    public static func contains(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
