/// The receive window sizes the SSH plugin's debug log reports for channels to `host`
/// (`receive window of a channel to HOST grown to N bytes ...`), in order.
public enum ReceiveWindowLog {
    public static func grownSizes(in log: String, host: String = "127.0.0.1") -> [Int] {
        log.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "receive window of a channel to \(host) grown to ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.flatMap { Int($0) }
        }
    }
}
