import Foundation

/// One attribute value of a Subsonic element, typed so JSON gets numbers and booleans while XML
/// gets their text.
enum SubsonicValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    var text: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): value ? "true" : "false"
        }
    }
}

/// One element of a Subsonic answer: the single model both renderers read, so XML and JSON
/// cannot disagree. `repeated` marks elements that are list members (a JSON array even when
/// there is one); `text` is an element's content (`<genre>Jazz</genre>`, JSON's `"value"`).
struct SubsonicElement: Sendable, Equatable {
    /// The element's name (`song`, `album`, …).
var name: String
    /// Attributes in order; nil values are dropped when added.
var attributes: [(String, SubsonicValue)]
    /// Child elements in order.
var children: [SubsonicElement]
    /// Whether this element is one of a list (`<song>` in `<album>`).
var repeated: Bool
    /// Text content, if any.
var text: String?

    /// An element with its parts.
init(_ name: String, repeated: Bool = false, _ attributes: [(String, SubsonicValue?)] = [], children: [SubsonicElement] = [], text: String? = nil) {
        self.name = name
        self.repeated = repeated
        self.attributes = attributes.compactMap { key, value in value.map { (key, $0) } }
        self.children = children
        self.text = text
    }

    /// A copy marked as a list member.
func asList() -> SubsonicElement {
        var copy = self
        copy.repeated = true
        return copy
    }

static func == (lhs: SubsonicElement, rhs: SubsonicElement) -> Bool {
        lhs.name == rhs.name && lhs.repeated == rhs.repeated && lhs.text == rhs.text && lhs.children == rhs.children
            && lhs.attributes.map(\.0) == rhs.attributes.map(\.0) && lhs.attributes.map(\.1) == rhs.attributes.map(\.1)
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
}

/// Renders the envelope `subsonic-response` around an answer's elements.
enum SubsonicRenderer {
    static let namespace = "http://subsonic.org/restapi"
    /// The protocol version answered (clients sending any older `v` are still served).
    static let apiVersion = "1.16.1"
    static let serverVersion = "0.1.0"

    /// The root element: status, versions, the OpenSubsonic flag, and the body elements.
    static func envelope(failed: Bool, _ body: [SubsonicElement]) -> SubsonicElement {
        SubsonicElement(
            "subsonic-response",
            [("status", .string(failed ? "failed" : "ok")), ("version", .string(apiVersion)), ("type", .string("shelf")),
             ("serverVersion", .string(serverVersion)), ("openSubsonic", .bool(true))],
            children: body)
    }

    /// The HTTP response of `root` in `format` (always 200: Subsonic reports failures in the body).
    static func response(_ root: SubsonicElement, format: SubsonicFormat, status: Int = 200) -> HTTPResponse {
        let (body, type): (String, String) = switch format {
        case .xml: (xmlDocument(root), "text/xml; charset=utf-8")
        case .json: (json(root), "application/json; charset=utf-8")
        case .jsonp(let callback): ("\(callback)(\(json(root)));", "application/javascript; charset=utf-8")
        }
        return HTTPResponse(status: status, headers: [("Content-Type", type), ("Cache-Control", "no-store")], body: .data(Data(body.utf8)))
    }

    // MARK: XML

    static func xmlDocument(_ root: SubsonicElement) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml(root, into: &out, namespace: true)
        return out
    }

    private static func xml(_ element: SubsonicElement, into out: inout String, namespace: Bool = false) {
        out += "<" + element.name
        if namespace { out += " xmlns=\"\(Self.namespace)\"" }
        for (key, value) in element.attributes { out += " \(key)=\"\(escape(value.text))\"" }
        if element.children.isEmpty && element.text == nil {
            out += "/>"
            return
        }
        out += ">"
        if let text = element.text { out += escape(text) }
        for child in element.children { xml(child, into: &out) }
        out += "</\(element.name)>"
    }

    /// XML text escaping; characters XML 1.0 forbids (control characters a tag may hold) are dropped.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: JSON

    /// `{"subsonic-response":{…}}`.
    static func json(_ root: SubsonicElement) -> String {
        var out = "{" + jsonString(root.name) + ":"
        jsonObject(root, into: &out)
        return out + "}"
    }

    private static func jsonObject(_ element: SubsonicElement, into out: inout String) {
        out += "{"
        var first = true
        func key(_ name: String) {
            if !first { out += "," }
            first = false
            out += jsonString(name) + ":"
        }
        for (name, value) in element.attributes {
            key(name)
            switch value {
            case .string(let text): out += jsonString(text)
            case .int(let number): out += String(number)
            case .double(let number): out += number.isFinite ? String(number) : "0"
            case .bool(let flag): out += flag ? "true" : "false"
            }
        }
        if let text = element.text {
            key("value")
            out += jsonString(text)
        }
        // Children grouped by name in first-appearance order: list members become one array.
        var order: [String] = []
        var groups: [String: [SubsonicElement]] = [:]
        for child in element.children {
            if groups[child.name] == nil { order.append(child.name) }
            groups[child.name, default: []].append(child)
        }
        for name in order {
            let members = groups[name] ?? []
            key(name)
            if members.count == 1, !members[0].repeated {
                jsonObject(members[0], into: &out)
            } else {
                out += "["
                for (index, member) in members.enumerated() {
                    if index > 0 { out += "," }
                    jsonObject(member, into: &out)
                }
                out += "]"
            }
        }
        out += "}"
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
