import CCurl
import Foundation
import Shelf
import ShelfCore

/// The limits one fetch runs within.
public struct FetchLimits: Sendable, Equatable {
    /// The most body bytes taken.
    public var maxBytes: Int64
    public var maxRedirects = 5
    /// The whole transfer's limit.
    public var timeoutSeconds = 60
    public var connectTimeoutSeconds = 15
    /// Abort when nothing arrives for this long.
    public var stallSeconds = 60
    /// Whether private, loopback and link-local addresses may be dialled.
    public var allowPrivate = false

    /// Limits with `maxBytes` and the defaults for the rest.
    public init(maxBytes: Int64) { self.maxBytes = maxBytes }
}

/// Why a fetch failed, in words fit for a channel's or episode's `errorMessage`.
public struct FetchError: Error, Sendable, CustomStringConvertible {
    /// Which limit or failure (`shelf_fetch_status`).
    public let status: Int32
    public let message: String
    public var description: String { message }
}

/// One HTTP(S) GET through libcurl (`Sources/CCurl`), blocking; callers run it off the
/// cooperative pool (`Fetcher.run`).
enum Fetcher {
    /// A flag another thread sets to stop a running fetch.
    final class Cancel: @unchecked Sendable {
        // An atomic int in C (`shelf_fetch_cancel`): set here, read by libcurl's progress callback
        // on the fetching thread; the pointer itself never changes after init.
        let flag: OpaquePointer?
        init() { flag = shelf_fetch_cancel_new() }
        deinit { shelf_fetch_cancel_free(flag) }
        func cancel() { shelf_fetch_cancel_set(flag) }
    }

    /// At most `limit` fetches at once across every host, so many feeds on many hosts cannot
    /// start hundreds of transfers (threads and buffers) together.
    actor Slots {
        private let limit: Int
        private var used = 0
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(limit: Int) { self.limit = max(1, limit) }

        /// Waits for a free slot.
        func acquire() async {
            if used < limit {
                used += 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        /// Hands the slot to the next waiter, or frees it.
        func release() {
            if waiting.isEmpty { used -= 1 } else { waiting.removeFirst().resume() }
        }
    }

    /// The body and the type the server declared.
    struct Body: Sendable {
        var data: Data
        var contentType: String
    }

    /// Fetches `url` into memory.
    static func data(_ url: String, limits: FetchLimits, cancel: Cancel? = nil) -> Result<Body, FetchError> {
        var result = shelf_fetch_result()
        let status = perform(url, fd: -1, limits: limits, cancel: cancel, &result)
        defer { shelf_fetch_free(&result) }
        guard status == 0 else { return .failure(error(status, &result)) }
        let data = result.body.map { Data(bytes: $0, count: Int(result.bytes)) } ?? Data()
        return .success(Body(data: data, contentType: string(&result.content_type)))
    }

    /// Fetches `url` into the open file `fd`; returns the byte count and declared type.
    static func file(_ url: String, fd: Int32, limits: FetchLimits, cancel: Cancel? = nil) -> Result<(Int64, String), FetchError> {
        var result = shelf_fetch_result()
        let status = perform(url, fd: fd, limits: limits, cancel: cancel, &result)
        defer { shelf_fetch_free(&result) }
        guard status == 0 else { return .failure(error(status, &result)) }
        return .success((result.bytes, string(&result.content_type)))
    }

    /// An HTTP answer of any status, with its body (an API's error document is in its body).
    struct Answer: Sendable {
        var status: Int
        var body: Data
    }

    /// POSTs `body` (or GETs without one) to `url` with extra `headers`, and answers whatever the
    /// server said; a failure is only one where no answer came (refused, timed out, cut off).
    static func send(
        _ url: String, body: Data?, headers: [String], limits: FetchLimits, agent: String
    ) -> Result<Answer, FetchError> {
        var result = shelf_fetch_result()
        defer { shelf_fetch_free(&result) }
        let lines = headers.filter { !$0.contains("\n") && !$0.contains("\r") }.joined(separator: "\n")
        let status: Int32 = url.withCString { cURL in
            agent.withCString { cAgent in
                lines.withCString { cHeaders in
                    (body ?? Data()).withUnsafeBytes { raw in
                        let bytes = raw.bindMemory(to: UInt8.self).baseAddress
                        // libcurl needs a non-NULL pointer to POST, even for an empty body.
                        let empty: [UInt8] = [0]
                        return empty.withUnsafeBufferPointer { zero in
                            var options = shelf_fetch_options(
                                url: cURL, fd: -1, max_bytes: limits.maxBytes, max_redirects: limits.maxRedirects,
                                timeout_seconds: limits.timeoutSeconds, connect_timeout_seconds: limits.connectTimeoutSeconds,
                                stall_seconds: limits.stallSeconds, allow_private: limits.allowPrivate ? 1 : 0, user_agent: cAgent, cancel: nil,
                                body: body == nil ? nil : (bytes ?? zero.baseAddress), body_length: body?.count ?? 0,
                                headers: lines.isEmpty ? nil : cHeaders)
                            return shelf_fetch(&options, &result)
                        }
                    }
                }
            }
        }
        guard status == 0 || status == 2 else { return .failure(error(status, &result)) }
        let data = result.body.map { Data(bytes: $0, count: Int(result.bytes)) } ?? Data()
        return .success(Answer(status: result.http_status, body: data))
    }

    /// Runs a blocking fetch on a thread of its own, so the cooperative pool's few threads never wait on the network.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Whether `host` is an IP literal (or `localhost`) of a private, loopback or link-local address.
    static func isPrivateLiteral(_ host: String) -> Bool {
        var bare = host
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        if bare.lowercased() == "localhost" || bare.lowercased().hasSuffix(".localhost") { return true }
        return shelf_fetch_is_private_literal(bare) == 1
    }

    private static func perform(_ url: String, fd: Int32, limits: FetchLimits, cancel: Cancel?, _ result: inout shelf_fetch_result) -> Int32 {
        url.withCString { cURL in
            "Shelf/\(EngineVersions.version) (podcasts)".withCString { agent in
                var options = shelf_fetch_options(
                    url: cURL, fd: fd, max_bytes: limits.maxBytes, max_redirects: limits.maxRedirects, timeout_seconds: limits.timeoutSeconds,
                    connect_timeout_seconds: limits.connectTimeoutSeconds, stall_seconds: limits.stallSeconds,
                    allow_private: limits.allowPrivate ? 1 : 0, user_agent: agent, cancel: cancel?.flag, body: nil, body_length: 0, headers: nil)
                return shelf_fetch(&options, &result)
            }
        }
    }

    private static func error(_ status: Int32, _ result: inout shelf_fetch_result) -> FetchError {
        FetchError(status: status, message: string(&result.message))
    }

    private static func string<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
    }
}
