/// Which way a transfer goes. Its own file, with nothing but the standard library, so the
/// fuzz target of background records compiles it as it is.
enum TransferDirection: String, Sendable, Codable { case download, upload }
