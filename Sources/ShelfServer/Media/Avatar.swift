import Foundation
import Shelf
import ShelfCore

/// The picture of a user who has none: their initials, white on a colour of their name, drawn
/// from a small built-in bitmap font (no font library needed), as a PNG.
enum Avatar {
    /// Rows of a 5×7 font, five bits each (the high bit on the left), for A–Z then 0–9.
    private static let glyphs: [Character: [UInt8]] = {
        let rows: [UInt32] = [
            0x0E11_111F, 0x1E11_111E, 0x0E11_1010, 0x1E11_1111, 0x1F10_101E, 0x1F10_101E, 0x0E11_1017, 0x1111_111F, 0x0E04_0404,
            0x0702_0202, 0x1112_1418, 0x1010_1010, 0x111B_1515, 0x1111_1915, 0x0E11_1111, 0x1E11_111E, 0x0E11_1111, 0x1E11_111E,
            0x0F10_100E, 0x1F04_0404, 0x1111_1111, 0x1111_1111, 0x1111_1115, 0x1111_0A04, 0x1111_110A, 0x1F01_0204,
            0x0E11_1315, 0x040C_0404, 0x0E11_0102, 0x1F02_0402, 0x0206_0A12, 0x1F10_1E01, 0x0608_101E, 0x1F01_0204, 0x0E11_110E,
            0x0E11_110F,
        ]
        let tails: [UInt32] = [
            0x11_1111, 0x11_111E, 0x10_110E, 0x11_111E, 0x10_101F, 0x10_1010, 0x11_110F, 0x11_1111, 0x04_040E,
            0x02_120C, 0x14_1211, 0x10_101F, 0x11_1111, 0x13_1111, 0x11_110E, 0x10_1010, 0x15_120D, 0x14_1211,
            0x01_011E, 0x04_0404, 0x11_110E, 0x11_0A04, 0x15_150A, 0x0A_1111, 0x04_0404, 0x08_101F,
            0x19_110E, 0x04_040E, 0x04_081F, 0x01_110E, 0x1F_0202, 0x01_110E, 0x11_110E, 0x08_0808, 0x11_110E,
            0x01_020C,
        ]
        var glyphs: [Character: [UInt8]] = [:]
        let names = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        for (index, name) in names.enumerated() {
            let head = rows[index]
            let tail = tails[index]
            glyphs[name] = [
                UInt8(head >> 24 & 0x1F), UInt8(head >> 16 & 0x1F), UInt8(head >> 8 & 0x1F), UInt8(head & 0x1F),
                UInt8(tail >> 16 & 0x1F), UInt8(tail >> 8 & 0x1F), UInt8(tail & 0x1F),
            ]
        }
        return glyphs
    }()

    /// The letters drawn for `name`: the first letter of its first two words (or its first two
    /// letters), upper-cased; characters the font lacks are left out.
    static func initials(of name: String) -> [Character] {
        let words = name.split { !$0.isLetter && !$0.isNumber }
        let letters = words.count >= 2 ? [words[0].first, words[1].first].compactMap { $0 } : Array(words.first?.prefix(2) ?? "")
        return letters.compactMap { letter in
            let folded = String(letter).folding(options: [.diacriticInsensitive, .widthInsensitive], locale: nil).uppercased()
            return folded.count == 1 && glyphs[folded.first!] != nil ? folded.first : nil
        }
    }

    /// A `side`-pixel square PNG of `name`'s initials.
    static func png(for name: String, side: Int = 128) throws -> Data {
        // The colour is a hash of the name, so a user keeps theirs and neighbours differ.
        var hash: UInt32 = 2_166_136_261
        for byte in name.lowercased().utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let hue = Double(hash % 360) / 60
        let x = 1 - abs(hue.truncatingRemainder(dividingBy: 2) - 1)
        let (r, g, b): (Double, Double, Double) =
            switch Int(hue) {
            case 0: (1, x, 0)
            case 1: (x, 1, 0)
            case 2: (0, 1, x)
            case 3: (0, x, 1)
            case 4: (x, 0, 1)
            default: (1, 0, x)
            }
        // Dark enough that white letters read on it.
        let background = [UInt8(40 + r * 120), UInt8(40 + g * 120), UInt8(40 + b * 120)]
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        for index in 0..<(side * side) {
            pixels[index * 4] = background[0]
            pixels[index * 4 + 1] = background[1]
            pixels[index * 4 + 2] = background[2]
        }
        let letters = initials(of: name)
        if !letters.isEmpty {
            let cell = side / (letters.count == 1 ? 10 : 14)
            let width = letters.count * 5 * cell + (letters.count - 1) * cell
            var left = (side - width) / 2
            let top = (side - 7 * cell) / 2
            for letter in letters {
                for (row, bits) in (glyphs[letter] ?? []).enumerated() {
                    for column in 0..<5 where bits & (0x10 >> UInt8(column)) != 0 {
                        for dy in 0..<cell {
                            for dx in 0..<cell {
                                let offset = ((top + row * cell + dy) * side + left + column * cell + dx) * 4
                                pixels[offset] = 255
                                pixels[offset + 1] = 255
                                pixels[offset + 2] = 255
                            }
                        }
                    }
                }
                left += 6 * cell
            }
        }
        return try ImageCodec.encode(DecodedImage(width: side, height: side, bytesPerRow: side * 4, pixels: pixels), as: .png)
    }
}
