import AssistantCore
import CCurl

/// How long one model request may take. The defaults suit a streamed answer: a connection within
/// 30 s, then at least one byte every 300 s (servers send keep-alive comments or pings while a
/// model thinks), and at most 30 minutes in all.
public struct HTTPTimeouts: Sendable, Equatable {
    public var connectSeconds: Int
    public var idleSeconds: Int
    public var totalSeconds: Int

    public init(connectSeconds: Int = 30, idleSeconds: Int = 300, totalSeconds: Int = 1800) {
        self.connectSeconds = connectSeconds
        self.idleSeconds = idleSeconds
        self.totalSeconds = totalSeconds
    }
}

/// The status line and the headers that matter of a finished response. The body of a success
/// went to the sink as it arrived; the body of any other status is kept here (capped).
struct HTTPResponseHead {
    var status: Int
    var retryAfter: String?
    var errorBody: [UInt8]
}

/// Why a transfer did not complete: libcurl's reason, the caller's sink, the cap, or a cancel.
enum HTTPTransferFailure: Error {
    case transport(String)
    case cancelled
    case tooLarge(limit: Int)
    case sink(ModelError)
}

/// One POST over a libcurl easy handle, driven by a multi handle so the caller's `isCancelled`
/// is polled every 50 ms, whatever the network does. Plain http is refused by the caller
/// (ProviderConfig) for other hosts than loopback; here both schemes are allowed, redirects are
/// not followed, and nothing is logged: request headers carry the API key.
enum HTTPTransfer {
    /// libcurl's process-wide setup, done once before the first handle (thread-safe from 7.84).
    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    static func post(url: String, headers: [String], body: String, timeouts: HTTPTimeouts, maxBytes: Int,
                     isCancelled: () -> Bool,
                     sink: (UnsafeRawBufferPointer) throws(ModelError) -> Void) throws(HTTPTransferFailure) -> HTTPResponseHead {
        guard globalInit, let easy = curl_easy_init() else { throw .transport("libcurl could not be initialised") }
        defer { curl_easy_cleanup(easy) }
        var list: UnsafeMutablePointer<curl_slist>? = nil
        // curl would send "Expect: 100-continue" for a large body and wait for the answer.
        for header in headers + ["Expect:"] { list = curl_slist_append(list, header) }
        defer { curl_slist_free_all(list) }
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        return try withoutActuallyEscaping(sink) { (sink) throws(HTTPTransferFailure) -> HTTPResponseHead in
            let context = TransferContext(easy: easy, maxBytes: maxBytes, sink: sink)
            let unmanaged = Unmanaged.passRetained(context)
            defer { unmanaged.release() }
            return try errorText.withUnsafeMutableBufferPointer { (errorBuffer) throws(HTTPTransferFailure) -> HTTPResponseHead in
                termhost_curl_set_string(easy, CURLOPT_URL, url)
                termhost_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
                termhost_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 0)
                termhost_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
                termhost_curl_set_long(easy, CURLOPT_POST, 1)
                let bodyBytes = Array(body.utf8)
                termhost_curl_set_long(easy, CURLOPT_POSTFIELDSIZE, bodyBytes.count)
                _ = bodyBytes.withUnsafeBufferPointer { termhost_curl_set_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
                termhost_curl_set_slist(easy, CURLOPT_HTTPHEADER, list)
                termhost_curl_set_string(easy, CURLOPT_USERAGENT, "termhost")
                termhost_curl_set_string(easy, CURLOPT_ACCEPT_ENCODING, "")
                termhost_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT, timeouts.connectSeconds)
                termhost_curl_set_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
                termhost_curl_set_long(easy, CURLOPT_LOW_SPEED_TIME, timeouts.idleSeconds)
                termhost_curl_set_long(easy, CURLOPT_TIMEOUT, timeouts.totalSeconds)
                termhost_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer.baseAddress)
                termhost_curl_set_data_callback(easy, CURLOPT_WRITEFUNCTION, receiveBody)
                termhost_curl_set_pointer(easy, CURLOPT_WRITEDATA, unmanaged.toOpaque())
                termhost_curl_set_data_callback(easy, CURLOPT_HEADERFUNCTION, receiveHeader)
                termhost_curl_set_pointer(easy, CURLOPT_HEADERDATA, unmanaged.toOpaque())

                let result = try run(easy, isCancelled: isCancelled)
                if let failure = context.failure { throw failure }
                guard result == CURLE_OK else {
                    let detail = String(cString: errorBuffer.baseAddress!)
                    var reason = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
                    if result == CURLE_OPERATION_TIMEDOUT {
                        reason += " (timeouts: connect \(timeouts.connectSeconds) s, idle \(timeouts.idleSeconds) s, total \(timeouts.totalSeconds) s)"
                    }
                    throw .transport(reason)
                }
                if context.status == 0 {   // no body: the write callback never ran
                    var code = 0
                    termhost_curl_response_code(easy, &code)
                    context.status = code
                }
                return HTTPResponseHead(status: context.status, retryAfter: context.retryAfter, errorBody: context.errorBody)
            }
        }
    }

    /// Runs the transfer to its end, checking `isCancelled` between waits of at most 50 ms.
    private static func run(_ easy: UnsafeMutableRawPointer, isCancelled: () -> Bool) throws(HTTPTransferFailure) -> CURLcode {
        guard let multi = curl_multi_init() else { throw .transport("libcurl could not be initialised") }
        defer { curl_multi_cleanup(multi) }
        curl_multi_add_handle(multi, easy)
        defer { curl_multi_remove_handle(multi, easy) }
        var running: Int32 = 1
        while true {
            if isCancelled() { throw .cancelled }
            curl_multi_perform(multi, &running)
            if running == 0 { break }
            curl_multi_poll(multi, nil, 0, 50, nil)
        }
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_OK
    }
}

/// What the callbacks share with `post`, reached through libcurl's user-data pointer.
private final class TransferContext {
    let easy: UnsafeMutableRawPointer
    let maxBytes: Int
    let sink: (UnsafeRawBufferPointer) throws(ModelError) -> Void
    var status = 0
    var retryAfter: String?
    var received = 0
    var errorBody: [UInt8] = []
    var failure: HTTPTransferFailure?

    init(easy: UnsafeMutableRawPointer, maxBytes: Int, sink: @escaping (UnsafeRawBufferPointer) throws(ModelError) -> Void) {
        self.easy = easy
        self.maxBytes = maxBytes
        self.sink = sink
    }
}

private let receiveHeader: termhost_curl_data_cb = { data, size, count, context in
    let state = Unmanaged<TransferContext>.fromOpaque(context!).takeUnretainedValue()
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        state.retryAfter = nil   // a new response (after 100 Continue, say) starts over
    } else if let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "retry-after" {
        state.retryAfter = line[line.index(after: colon)...].trimmedHeaderValue
    }
    return size * count
}

private let receiveBody: termhost_curl_data_cb = { data, size, count, context in
    let state = Unmanaged<TransferContext>.fromOpaque(context!).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    if state.status == 0 {
        var code = 0
        termhost_curl_response_code(state.easy, &code)
        state.status = code
    }
    state.received += bytes.count
    guard state.received <= state.maxBytes else {
        state.failure = .tooLarge(limit: state.maxBytes)
        return 0
    }
    if (200..<300).contains(state.status) {
        do throws(ModelError) {
            try state.sink(bytes)
        } catch {
            state.failure = .sink(error)
            return 0
        }
    } else {
        state.errorBody.append(contentsOf: bytes)
    }
    return bytes.count
}

private extension Substring {
    var trimmedHeaderValue: String {
        var s = self
        while let c = s.first, " \t\r\n".contains(c) { s.removeFirst() }
        while let c = s.last, " \t\r\n".contains(c) { s.removeLast() }
        return String(s)
    }
}
