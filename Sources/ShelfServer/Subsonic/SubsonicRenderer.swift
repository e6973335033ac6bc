import Foundation
import Shelf

/// What a Subsonic handler answers: a body written inside the envelope, or bytes (stream,
/// download, getCoverArt, a cached index) sent as they are.
enum SubsonicReply: Sendable {
    /// Writes the answer's elements into the open `subsonic-response`.
    case body(@Sendable (inout SubsonicWriter) -> Void)
    case binary(HTTPResponse)

    /// An answer with nothing but the envelope.
    static let empty = SubsonicReply.body { _ in }

    /// An answer of one element `name` made of `model`.
    static func element(_ name: String, _ model: some SubsonicModel) -> SubsonicReply {
        .body { $0.element(name, model) }
    }

    /// An answer of one element `name` holding the list `members` of `models`.
    static func container(_ name: String, _ members: String, _ models: [some SubsonicModel]) -> SubsonicReply {
        .body { $0.container(name, members, models) }
    }
}

/// The output formats (`f`): XML by default, JSON, and JSONP with a checked callback name.
enum SubsonicFormat: Sendable, Equatable {
    case xml
    case json
    case jsonp(callback: String)

    /// The format of `f` and `callback`; nil for an unknown `f` or a callback that is not a plain
    /// JavaScript name (anything else could inject script into the page that loads it).
    static func parse(_ f: String?, callback: String?) -> SubsonicFormat? {
        switch f {
        case nil, "", "xml": return .xml
        case "json": return .json
        case "jsonp":
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$")
            guard let callback, !callback.isEmpty, callback.count <= 100, callback.allSatisfy({ allowed.contains($0) }) else { return nil }
            return .jsonp(callback: callback)
        default: return nil
        }
    }

    /// Whether the body is JSON (JSONP is JSON inside its callback).
    var isJSON: Bool { self != .xml }
}

/// The envelope `subsonic-response` around an answer, and the one error envelope of the API.
enum SubsonicRenderer {
    static let namespace: StaticString = "http://subsonic.org/restapi"
    /// The protocol version answered (clients sending any older `v` are still served).
    static let apiVersion = "1.16.1"
    /// Shelf's own version, the one `shelf --version` prints: one place for both.
    static let serverVersion = EngineVersions.version

    /// Whether the call being answered declared an API version before 1.16.1 (see `SubsonicWriter.legacyXML`).
    @TaskLocal static var olderClient = false

    /// Whether `v` (the client's declared API version) is before OpenSubsonic's 1.16.1; a missing
    /// or unreadable one counts as current.
    static func isOlder(_ v: String?) -> Bool {
        guard let v else { return false }
        let parts = v.split(separator: ".").map { Int($0) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { return false }
        let numbers = parts.map { $0! } + Array(repeating: 0, count: max(0, 3 - parts.count))
        return numbers.lexicographicallyPrecedes([1, 16, 1])
    }

    /// The whole document: the root element's status, versions and OpenSubsonic flag, then `body`.
    static func document(json: Bool, failed: Bool = false, capacity: Int = 4_096, _ body: (inout SubsonicWriter) -> Void) -> Data {
        var w = SubsonicWriter(json: json, capacity: capacity)
        w.legacyXML = olderClient
        w.beginDocument()
        w.open("subsonic-response")
        w.namespace(namespace)
        w.attribute("status", failed ? "failed" : "ok")
        w.attribute("version", apiVersion)
        w.attribute("type", "shelf")
        w.attribute("serverVersion", serverVersion)
        w.attribute("openSubsonic", true)
        body(&w)
        w.close()
        w.endDocument()
        return w.finish()
    }

    /// The HTTP response of `body` in `format` (200 unless said: Subsonic reports failures in the body).
    static func response(
        format: SubsonicFormat, failed: Bool = false, status: Int = 200, capacity: Int = 4_096,
        _ body: (inout SubsonicWriter) -> Void
    ) -> HTTPResponse {
        response(document(json: format.isJSON, failed: failed, capacity: capacity, body), format: format, status: status)
    }

    /// The HTTP response of a rendered document (JSONP wraps the JSON in its callback).
    static func response(_ document: Data, format: SubsonicFormat, status: Int = 200) -> HTTPResponse {
        let (body, type): (Data, String) =
            switch format {
            case .xml: (document, "text/xml; charset=utf-8")
            case .json: (document, "application/json; charset=utf-8")
            case .jsonp(let callback): (Data(callback.utf8) + Data("(".utf8) + document + Data(");".utf8), "application/javascript; charset=utf-8")
            }
        return HTTPResponse(status: status, headers: [("Content-Type", type), ("Cache-Control", "no-store")], body: .data(body))
    }

    /// The failed envelope of `error`.
    static func failure(_ error: SubsonicError, format: SubsonicFormat) -> HTTPResponse {
        var response = response(format: format, failed: true, status: error.status, capacity: 512) { w in
            w.element("error", SubsonicErrorBody(code: error.code, message: error.message))
        }
        if error.status == 429 { response.headers.append(("Retry-After", "60")) }
        return response
    }
}
