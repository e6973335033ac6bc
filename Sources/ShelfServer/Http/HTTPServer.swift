import CMicroHTTPD
import Foundation
import ShelfCore

/// Why an `HTTPServer` could not start listening: the address and port it tried and the reason.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The address it tried to bind.
    public var address: String
    /// The port it tried to bind (0: any free port).
    public var port: UInt16
    /// What went wrong, in libmicrohttpd's or the system's words.
    public var reason: String

    /// An error from its parts.
    public init(address: String, port: UInt16, reason: String) {
        self.address = address
        self.port = port
        self.reason = reason
    }

    /// The sentence for people: address, port and reason.
    public var description: String { "cannot listen on \(address) port \(port): \(reason)" }
}

/// An HTTP/1.1 server on libmicrohttpd's thread pool that hands each complete request to an async
/// handler. No pool thread waits for a handler or for an idle stream: such connections are parked
/// (suspended) and woken when there is something to send.
public final class HTTPServer: Sendable {
    private let core: ServerCore

    /// Starts listening on `address` (an IPv4 or IPv6 literal, bound exactly) and `port` (0: any
    /// free port). `bodyLimit` may raise or lower the body limit per route; `log` gets one entry per
    /// finished request and `errorLog` libmicrohttpd's own error messages. From `proxies` the
    /// forwarding headers are believed. Throws `HTTPServerError`.
    public init(
        address: String, port: UInt16, limits: HTTPLimits = HTTPLimits(),
        tls: (certificatePEM: Data, keyPEM: Data)? = nil, proxies: TrustedProxies = TrustedProxies(),
        bodyLimit: @escaping @Sendable (_ method: String, _ path: String) -> Int? = { _, _ in nil },
        errorLog: @escaping @Sendable (String) -> Void = { _ in },
        log: @escaping @Sendable (AccessLogEntry) -> Void,
        handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
    ) throws {
        core = ServerCore(
            limits: limits, isTLS: tls != nil, proxies: proxies, bodyLimit: bodyLimit, errorLog: errorLog, log: log, handler: handler)
        try core.start(address: address, port: port, tls: tls)
    }

    /// The port the server listens on (the chosen one when started with port 0).
    public var port: UInt16 { core.port }

    /// Whether the server speaks HTTPS.
    public var isTLS: Bool { core.isTLS }

    /// Stops accepting connections, lets requests in flight finish for up to `grace`, then cancels
    /// every open stream and closes everything. Safe to call more than once; must not be called
    /// from inside a handler's synchronous part on a server thread (it joins those threads).
    public func stop(grace: Duration) { core.stop(grace: grace, afterQuiesce: nil) }

    /// `stop(grace:)` that runs `afterQuiesce` once new connections are no longer accepted, so a
    /// test can release a request in flight at exactly that point.
    func stop(grace: Duration, afterQuiesce: (@Sendable () -> Void)?) { core.stop(grace: grace, afterQuiesce: afterQuiesce) }

    /// Whether this libmicrohttpd was built with TLS, i.e. whether `tls:` can be used.
    public static var tlsSupported: Bool { shelf_http_tls_supported() != 0 }

    deinit { core.stop(grace: .zero, afterQuiesce: nil) }
}

/// A libmicrohttpd pointer that is only used under the rules of its API (any thread may resume).
private struct Handle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// How many request contexts exist, so tests can tell that each one is freed.
let liveRequestContexts = Locked(0)

/// One request's state, shared by the pool thread serving it, the handler's task and a stream's
/// producer. `@unchecked Sendable`: the mutable part is only reached through `state`'s lock.
private final class RequestContext: @unchecked Sendable {
    enum Phase { case new, receiving, dispatched, answered }
    struct State {
        var phase = Phase.new
        var method = "-"
        var isHead = false
        var body = Data()
        var limit = 0
        var headers: [String: String] = [:]
        /// The status the bridge chose itself, for the log when libmicrohttpd reports none.
        var ownStatus = 0
        /// The client a trusted proxy forwarded, for the log; nil: the socket's peer.
        var forwardedAddress: String?
        /// Whether this request counts toward `forwardedAddress`'s requests in flight.
        var countedClient = false
        var response: HTTPResponse?
        var sentLength: UInt64 = 0
        var stream: ByteStream?
        var countedBusy = false
        var finished = false
    }

    let core: ServerCore
    let connection: Handle
    let rawTarget: String
    let remoteAddress: String
    let started = ContinuousClock.now
    let state = Locked(State())

    init(core: ServerCore, connection: Handle, rawTarget: String, remoteAddress: String) {
        liveRequestContexts.withLock { $0 += 1 }
        self.core = core
        self.connection = connection
        self.rawTarget = rawTarget
        self.remoteAddress = remoteAddress
    }

    deinit { liveRequestContexts.withLock { $0 -= 1 } }

    /// Stores the handler's answer unless the request is already over or answered by the bridge;
    /// an answer that is dropped still gives back its descriptor or stops its producer.
    func deliver(_ response: HTTPResponse) {
        let kept = state.withLock { state -> Bool in
            guard !state.finished, state.phase == .dispatched, state.response == nil else { return false }
            state.response = response
            return true
        }
        if !kept { dispose(response) }
    }
}

private func dispose(_ response: HTTPResponse) {
    switch response.body {
    case .file(let descriptor, _, _): close(descriptor)
    case .stream(let stream): stream.cancel()
    case .data: break
    }
}

/// The part of the server libmicrohttpd's callbacks reach (through an unretained pointer that
/// stays valid until `shelf_http_stop` has returned). `@unchecked Sendable`: its mutable state is
/// in `gate` and `daemon`, both behind locks.
private final class ServerCore: @unchecked Sendable {
    struct Gate {
        /// Set once the grace period is over: nothing may be parked from then on.
        var stopping = false
        var stopRequested = false
        /// Parked connections by context; resuming happens only for one taken out of here, under
        /// the lock, so a connection is never resumed twice nor after the daemon is gone.
        var parked: [ObjectIdentifier: RequestContext] = [:]
        var streams: [ObjectIdentifier: ByteStream] = [:]
        /// Requests dispatched and not yet complete whose answer is not a stream.
        var busy = 0
        /// Requests in flight by the address of a client behind a trusted proxy: there the
        /// per-address limit counts requests, as it counts connections from everyone else.
        var forwarded: [String: Int] = [:]
    }

    let limits: HTTPLimits
    let isTLS: Bool
    let proxies: TrustedProxies
    let bodyLimit: @Sendable (String, String) -> Int?
    let errorLog: @Sendable (String) -> Void
    let log: @Sendable (AccessLogEntry) -> Void
    let handler: @Sendable (HTTPRequest) async -> HTTPResponse
    let gate = Locked(Gate())
    let daemon = Locked<Handle?>(nil)
    // Written once in `start`, before the server is handed to anyone; no callback reads it.
    private(set) var port: UInt16 = 0

    init(
        limits: HTTPLimits, isTLS: Bool, proxies: TrustedProxies, bodyLimit: @escaping @Sendable (String, String) -> Int?,
        errorLog: @escaping @Sendable (String) -> Void, log: @escaping @Sendable (AccessLogEntry) -> Void,
        handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
    ) {
        self.limits = limits
        self.isTLS = isTLS
        self.proxies = proxies
        self.bodyLimit = bodyLimit
        self.errorLog = errorLog
        self.log = log
        self.handler = handler
    }

    func start(address: String, port requested: UInt16, tls: (certificatePEM: Data, keyPEM: Data)?) throws {
        var callbacks = shelf_http_callbacks(
            request_started: { context, connection, target in
                guard let context, let connection else { return nil }
                return ServerCore.from(context).requestStarted(Handle(pointer: connection), target.map { String(cString: $0) } ?? "")
            },
            access: { context, connection, method, upload, uploadSize, requestContext in
                guard let context, let connection, let uploadSize, let requestContext else { return 0 }
                return ServerCore.from(context).access(
                    Handle(pointer: connection), method.map { String(cString: $0) } ?? "GET", upload, uploadSize, requestContext)
                    ? 1 : 0
            },
            completed: { context, connection, requestContext, reason in
                guard let context, let connection, let requestContext else { return }
                ServerCore.from(context).completed(Handle(pointer: connection), requestContext, reason: reason)
            },
            error_log: { context, message in
                guard let context, let message else { return }
                ServerCore.from(context).errorLog(String(cString: message))
            },
            unlimited: { context, address in
                guard let context, let address else { return 0 }
                return ServerCore.from(context).proxies.trusts(String(cString: address)) ? 1 : 0
            })
        var options = shelf_http_options(
            threads: UInt32(clamping: limits.threads), connection_memory: max(limits.headerBytes, 4096),
            connections: UInt32(clamping: limits.connections), connections_per_address: UInt32(clamping: limits.connectionsPerAddress),
            idle_seconds: UInt32(clamping: limits.idleSeconds), tls_cert_pem: nil, tls_key_pem: nil)
        let certificate = tls.map { String(decoding: $0.certificatePEM, as: UTF8.self) } ?? ""
        let key = tls.map { String(decoding: $0.keyPEM, as: UTF8.self) } ?? ""
        var error = [CChar](repeating: 0, count: 512)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started: OpaquePointer? = certificate.withCString { certificatePointer in
            key.withCString { keyPointer in
                if tls != nil {
                    options.tls_cert_pem = certificatePointer
                    options.tls_key_pem = keyPointer
                }
                return shelf_http_start(address, requested, &options, &callbacks, context, &error, error.count)
            }
        }
        guard let started else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw HTTPServerError(address: address, port: requested, reason: reason.isEmpty ? "libmicrohttpd could not start" : reason)
        }
        port = shelf_http_port(started)
        daemon.withLock { $0 = Handle(pointer: started) }
    }

    static func from(_ pointer: UnsafeMutableRawPointer) -> ServerCore {
        Unmanaged<ServerCore>.fromOpaque(pointer).takeUnretainedValue()
    }

    // MARK: Callbacks (on pool threads)

    func requestStarted(_ connection: Handle, _ target: String) -> UnsafeMutableRawPointer {
        var buffer = [CChar](repeating: 0, count: 64)
        shelf_http_client_address(connection.pointer, &buffer, buffer.count)
        let address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let context = RequestContext(core: self, connection: connection, rawTarget: target, remoteAddress: address)
        // The reference libmicrohttpd holds; given back in `completed`.
        return Unmanaged.passRetained(context).toOpaque()
    }

    func access(
        _ connection: Handle, _ method: String, _ upload: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>,
        _ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        if slot.pointee == nil { slot.pointee = requestStarted(connection, "") }
        let context = Unmanaged<RequestContext>.fromOpaque(slot.pointee!).takeUnretainedValue()
        let phase = context.state.withLock { $0.phase }
        switch phase {
        case .new:
            return begin(context, method: method)
        case .receiving:
            if uploadSize.pointee > 0 {
                let fits = context.state.withLock { state -> Bool in
                    guard state.body.count + uploadSize.pointee <= state.limit else {
                        state.ownStatus = 413
                        return false
                    }
                    state.body.append(UnsafeRawPointer(upload!).assumingMemoryBound(to: UInt8.self), count: uploadSize.pointee)
                    return true
                }
                // A response cannot be queued in the middle of an upload, so a body without a
                // Content-Length that outgrows the limit closes the connection instead of being read.
                guard fits else { return false }
                uploadSize.pointee = 0
                return true
            }
            return dispatch(context)
        case .dispatched:
            let next = context.state.withLock { state -> HTTPResponse? in
                if let response = state.response {
                    state.response = nil
                    state.phase = .answered
                    return response
                }
                return nil
            }
            if let next { return queue(next, on: context) }
            if gate.withLock({ $0.stopping }) {
                context.state.withLock { $0.phase = .answered }
                return queue(Self.errorResponse(503, "shuttingDown", "the server is shutting down"), on: context)
            }
            return true
        case .answered:
            return true
        }
    }

    /// The first call for a request: its line and headers are in, its body is not.
    private func begin(_ context: RequestContext, method: String) -> Bool {
        let headers = Self.headers(of: context.connection)
        var rejection: HTTPError?
        var path = "/"
        if context.rawTarget.utf8.count > limits.urlBytes {
            rejection = HTTPError(status: 414, code: "uriTooLong", message: "the request target is longer than \(limits.urlBytes) bytes")
        } else {
            do { path = try HTTPRequest.parseTarget(context.rawTarget).path } catch { rejection = error }
        }
        let limit = bodyLimit(method, path) ?? limits.bodyBytes
        if rejection == nil, let declared = headers["content-length"].flatMap({ UInt64($0) }), declared > UInt64(max(limit, 0)) {
            rejection = HTTPError(status: 413, code: "payloadTooLarge", message: "the request body is larger than \(limit) bytes")
        }
        context.state.withLock { state in
            state.method = method
            state.isHead = method == "HEAD"
            state.headers = headers
            state.limit = limit
            state.phase = rejection == nil ? .receiving : .answered
            if let rejection { state.ownStatus = rejection.status }
        }
        guard let rejection else { return true }
        return queue(Self.errorResponse(rejection), on: context)
    }

    /// The body is complete: parks the connection and runs the handler on the cooperative pool.
    /// Returns libmicrohttpd's answer (false closes the connection).
    private func dispatch(_ context: RequestContext) -> Bool {
        var request = context.state.withLock { state -> HTTPRequest in
            state.phase = .dispatched
            let parsed = try? HTTPRequest.parseTarget(context.rawTarget)
            return HTTPRequest(
                method: state.method, path: parsed?.path ?? "/", query: parsed?.query ?? [], headers: state.headers,
                body: state.body, remoteAddress: context.remoteAddress, isTLS: isTLS)
        }
        context.state.withLock { $0.body = Data() }
        if !proxies.networks.isEmpty {
            let client = proxies.client(peer: context.remoteAddress, headers: request.headers, isTLS: isTLS)
            request.remoteAddress = client.address
            request.scheme = client.scheme
            request.host = client.host
            request.proxied = client.proxied
            if client.proxied {
                context.state.withLock { $0.forwardedAddress = client.address }
                if limits.connectionsPerAddress > 0, !proxies.trusts(client.address) {
                    let admitted = gate.withLock { gate -> Bool in
                        let count = gate.forwarded[client.address, default: 0]
                        guard count < limits.connectionsPerAddress else { return false }
                        gate.forwarded[client.address] = count + 1
                        return true
                    }
                    guard admitted else {
                        context.state.withLock { $0.phase = .answered }
                        return queue(
                            Self.errorResponse(
                                HTTPError(
                                    status: 429, code: "tooManyRequests",
                                    message: "\(client.address) has \(limits.connectionsPerAddress) requests in flight already",
                                    headers: [("Retry-After", "1")])), on: context)
                    }
                    context.state.withLock { $0.countedClient = true }
                }
            }
        }
        let parked = gate.withLock { gate -> Bool in
            if gate.stopping { return false }
            shelf_http_suspend(context.connection.pointer)
            gate.parked[ObjectIdentifier(context)] = context
            gate.busy += 1
            return true
        }
        guard parked else { return true }  // the next call answers 503
        context.state.withLock { $0.countedBusy = true }
        let handler = handler
        let forwarded = request
        Task {
            let response = await handler(forwarded)
            context.deliver(response)
            self.wake(context)
        }
        return true
    }

    /// Resumes `context`'s connection if it is parked; callable from any thread.
    func wake(_ context: RequestContext) {
        gate.withLock { gate in
            if gate.parked.removeValue(forKey: ObjectIdentifier(context)) != nil { shelf_http_resume(context.connection.pointer) }
        }
    }

    private func queue(_ response: HTTPResponse, on context: RequestContext) -> Bool {
        let isHead = context.state.withLock { $0.isHead }
        let made: OpaquePointer?
        var sentLength: UInt64 = 0
        switch response.body {
        case .data(let data):
            made = data.withUnsafeBytes { shelf_http_response_buffer($0.baseAddress, $0.count) }
            sentLength = UInt64(data.count)
        case .file(let descriptor, let offset, let length):
            made = shelf_http_response_file(descriptor, offset, length)
            // Until the response exists nobody owns the descriptor but us.
            if made == nil { close(descriptor) }
            sentLength = length
        case .stream(let stream):
            gate.withLock { gate in
                gate.streams[ObjectIdentifier(stream)] = stream
                if context.state.withLock({ $0.countedBusy }) { gate.busy -= 1 }
            }
            context.state.withLock {
                $0.stream = stream
                $0.countedBusy = false
            }
            made = shelf_http_response_reader(
                stream.length ?? UInt64.max,
                { pointer, _, buffer, max in
                    guard let pointer, let buffer else { return -2 }
                    let context = Unmanaged<RequestContext>.fromOpaque(pointer).takeUnretainedValue()
                    return context.read(into: buffer, max: max)
                },
                Unmanaged.passRetained(context).toOpaque(),
                { pointer in
                    if let pointer { Unmanaged<RequestContext>.fromOpaque(pointer).release() }
                })
        }
        guard let made else {
            context.state.withLock { $0.ownStatus = 500 }
            return false
        }
        defer { shelf_http_response_release(made) }
        for (name, value) in response.headers {
            let lower = name.lowercased()
            // libmicrohttpd writes these itself from the body it was given.
            if lower == "content-length" || lower == "transfer-encoding" { continue }
            _ = shelf_http_response_header(made, name, value)
        }
        context.state.withLock {
            $0.sentLength = isHead ? 0 : sentLength
            if $0.ownStatus == 0 { $0.ownStatus = response.status }
        }
        return shelf_http_queue(context.connection.pointer, UInt32(clamping: response.status), made) != 0
    }

    func completed(_ connection: Handle, _ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>, reason: Int32) {
        guard let raw = slot.pointee else { return }
        slot.pointee = nil
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
        let queued = Int(shelf_http_status(connection.pointer))
        let (state, pending) = context.state.withLock { state -> (RequestContext.State, HTTPResponse?) in
            state.finished = true
            defer { state.response = nil }
            return (state, state.response)
        }
        if let pending { dispose(pending) }
        var bytes = state.sentLength
        if let stream = state.stream {
            stream.cancel()
            bytes = stream.bytesSent
        }
        gate.withLock { gate in
            gate.parked.removeValue(forKey: ObjectIdentifier(context))
            if let stream = state.stream { gate.streams.removeValue(forKey: ObjectIdentifier(stream)) }
            if state.countedBusy { gate.busy -= 1 }
            if state.countedClient, let address = state.forwardedAddress {
                let left = gate.forwarded[address, default: 1] - 1
                gate.forwarded[address] = left > 0 ? left : nil
            }
        }
        let status = queued != 0 ? queued : state.ownStatus
        if reason != 0 && state.stream == nil && queued == 0 { bytes = 0 }
        log(
            AccessLogEntry(
                method: state.method, target: context.rawTarget, status: status, bytes: bytes,
                milliseconds: Double((ContinuousClock.now - context.started) / .microseconds(1)) / 1000,
                remoteAddress: state.forwardedAddress ?? context.remoteAddress))
    }

    // MARK: Stopping

    func stop(grace: Duration, afterQuiesce: (@Sendable () -> Void)?) {
        let first = gate.withLock { gate -> Bool in
            defer { gate.stopRequested = true }
            return !gate.stopRequested
        }
        guard first, let handle = daemon.withLock({ $0 }) else { return }
        shelf_http_quiesce(handle.pointer)
        afterQuiesce?()
        let deadline = ContinuousClock.now + grace
        // A short poll: the handlers report nothing else, and stop is rare.
        while gate.withLock({ $0.busy }) > 0, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        let streams = gate.withLock { gate -> [ByteStream] in
            gate.stopping = true
            for context in gate.parked.values { shelf_http_resume(context.connection.pointer) }
            gate.parked = [:]
            return Array(gate.streams.values)
        }
        for stream in streams { stream.cancel() }
        shelf_http_stop(handle.pointer)
        daemon.withLock { $0 = nil }
    }

    // MARK: Helpers

    static func headers(of connection: Handle) -> [String: String] {
        final class Box { var headers: [String: String] = [:] }
        let box = Box()
        withExtendedLifetime(box) {
            shelf_http_headers(
                connection.pointer,
                { pointer, name, nameSize, value, valueSize in
                    guard let pointer, let name, let value else { return }
                    let box = Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
                    let key = String(decoding: UnsafeRawBufferPointer(start: name, count: nameSize), as: UTF8.self).lowercased()
                    let text = String(decoding: UnsafeRawBufferPointer(start: value, count: valueSize), as: UTF8.self)
                    if let old = box.headers[key] { box.headers[key] = old + ", " + text } else { box.headers[key] = text }
                },
                Unmanaged.passUnretained(box).toOpaque())
        }
        return box.headers
    }

    /// The JSON error body every answer the bridge makes itself carries.
    static func errorResponse(_ error: HTTPError) -> HTTPResponse {
        let document: [String: Any] = ["error": ["code": error.code, "message": error.message]]
        let body = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data()
        return HTTPResponse(
            status: error.status, headers: [("Content-Type", "application/json; charset=utf-8")] + error.headers, body: .data(body))
    }

    static func errorResponse(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
        errorResponse(HTTPError(status: status, code: code, message: message))
    }
}

extension RequestContext {
    /// The stream's content reader: copies what is buffered, or parks the connection until the
    /// producer writes, finishes or the stream is cancelled.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        guard let stream = state.withLock({ $0.stream }) else { return -2 }
        // Reading and parking happen under the gate so a wakeup cannot slip in between them.
        return core.gate.withLock { gate -> Int in
            switch stream.read(max: max, wakeup: { [weak self] in if let self { core.wake(self) } }) {
            case .data(let data):
                data.copyBytes(to: UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: data.count)
                return data.count
            case .end:
                return -1
            case .aborted:
                return -2
            case .pending:
                if gate.stopping { return -1 }
                shelf_http_suspend(connection.pointer)
                gate.parked[ObjectIdentifier(self)] = self
                return 0
            }
        }
    }
}
