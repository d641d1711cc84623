/// A store failure, naming the database file and SQLite's own message and code.
public struct StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable { case notFound, busy, io, invalid }
    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
