import AssistantCore

/// A ModelProvider over HTTP: one wire format, one URL, the retry loop.
///
/// Design: each attempt POSTs the same body and feeds the response, as it arrives, through the
/// SSE parser and the format's decoder to `onEvent`. An attempt fails transiently (see
/// `RetrySchedule`) or for good; a transient failure is retried after the schedule's wait only
/// while nothing of the response has been reported, since a retry would hand the run engine the
/// same text or tool call twice. Every error message starts with the provider's name and never
/// holds the API key: it goes only into a request header, and any echo of it in a server's error
/// text is replaced.
struct HTTPModelProvider: ModelProvider {
    let name: String
    let url: String
    let wire: any WireFormat
    let apiKey: String?
    let options: ProviderOptions

    func stream(system: String, messages: [ChatMessage], tools: [ToolSpec], isCancelled: @Sendable () -> Bool,
                onEvent: (ModelEvent) -> Void) throws(ModelError) {
        let body = wire.body(system: system, messages: messages, tools: tools)
        var retries = 0
        while true {
            var reported = false
            let failure: ClassifiedFailure
            do throws(ClassifiedFailure) {
                try attempt(body: body, isCancelled: isCancelled) { event in
                    reported = true
                    onEvent(event)
                }
                return
            } catch {
                failure = error
            }
            if failure.error.kind == .cancelled { throw failure.error }
            guard failure.retryable, !reported, retries < options.retry.delays.count else {
                let note = retries == 0 ? "" : " (after \(retries + 1) attempts)"
                throw finalError(failure.error, note: reported && failure.retryable ? " (the response had begun; not retried)" : note)
            }
            let wait = options.retry.delay(beforeRetry: retries, retryAfter: failure.retryAfter)
            guard RetrySchedule.wait(wait, isCancelled: isCancelled) else { throw ModelError(.cancelled, "provider '\(name)': cancelled") }
            retries += 1
        }
    }

    private func attempt(body: String, isCancelled: () -> Bool, report: (ModelEvent) -> Void) throws(ClassifiedFailure) {
        var parser = SSEParser(maxEventBytes: options.maxResponseBytes)
        var decoder = wire.makeDecoder()
        var firstByte = true
        let head: HTTPResponseHead
        do {
            head = try HTTPTransfer.post(url: url, headers: wire.headers(apiKey: apiKey), body: body, timeouts: options.timeouts,
                                         maxBytes: options.maxResponseBytes, isCancelled: isCancelled) { (bytes) throws(ModelError) in
                if firstByte {
                    firstByte = false
                    options.onFirstByte?(ContinuousClock.now)
                }
                let events: [SSEEvent]
                do { events = try parser.feed(bytes) } catch {
                    throw ModelError(.tooLarge, "a streamed event is larger than \(byteCount(options.maxResponseBytes))")
                }
                for event in events where !decoder.isFinished {
                    for modelEvent in try decoder.decode(event) { report(modelEvent) }
                }
            }
        } catch {
            switch error {
            case .cancelled: throw ClassifiedFailure(error: ModelError(.cancelled, "cancelled"), retryable: false)
            case .transport(let reason): throw ClassifiedFailure(error: ModelError(.transport, reason), retryable: true)
            case .tooLarge(let limit):
                throw ClassifiedFailure(error: ModelError(.tooLarge, "the response is larger than \(byteCount(limit))"), retryable: false)
            case .sink(let modelError):
                var retryable = false
                if case .provider(let type) = modelError.kind { retryable = HTTPFailure.isTransient(streamErrorType: type) }
                throw ClassifiedFailure(error: modelError, retryable: retryable)
            }
        }
        guard (200..<300).contains(head.status) else {
            throw HTTPFailure.classify(status: head.status, body: head.errorBody, retryAfter: head.retryAfter)
        }
        guard decoder.isFinished else {
            throw ClassifiedFailure(error: ModelError(.transport, "stream ended early: the connection closed before the response's end marker"),
                                    retryable: true)
        }
    }

    /// The message as the user sees it: the provider's name first, the API key never.
    private func finalError(_ error: ModelError, note: String) -> ModelError {
        var message = error.message
        if case .provider(let type) = error.kind { message = "the stream reported \(type): \(message)" }
        if let apiKey, apiKey.count >= 4 { message = message.replacingOccurrences(of: apiKey, with: "[API key]") }
        return ModelError(error.kind, "provider '\(name)' (\(url)): \(message)\(note)")
    }
}

/// "16 MiB", or bytes for a size that is not whole mebibytes.
private func byteCount(_ n: Int) -> String {
    n % (1 << 20) == 0 ? "\(n >> 20) MiB" : "\(n) bytes"
}

private extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
