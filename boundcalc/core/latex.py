"""Text and sympy expressions as ASCII LaTeX (pdflatex-safe): :func:`tex_text`, :func:`tex_math`,
:func:`tex_number`. Unicode math symbols and accents are translated to LaTeX commands."""
from __future__ import annotations

import unicodedata

import sympy as sp



# (text-mode glyphs that need the textcomp/T1 fonts are avoided: math mode is used instead)
_TEX_CHARS = {
    "\\": r"\ensuremath{\backslash}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\ensuremath{\sim}", "^": r"\^{}",
    "<": r"\ensuremath{<}", ">": r"\ensuremath{>}", "|": r"\ensuremath{|}",
}
_TEX_UNICODE = {
    "ε": r"\varepsilon", "δ": r"\delta", "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "θ": r"\theta",
    "ρ": r"\rho", "σ": r"\sigma", "μ": r"\mu", "λ": r"\lambda", "π": r"\pi", "ν": r"\nu", "τ": r"\tau",
    "κ": r"\kappa", "η": r"\eta", "ξ": r"\xi", "ζ": r"\zeta", "φ": r"\phi", "ψ": r"\psi", "ω": r"\omega",
    "χ": r"\chi", "Φ": r"\Phi", "Σ": r"\Sigma", "Δ": r"\Delta", "Γ": r"\Gamma", "Θ": r"\Theta",
    "Λ": r"\Lambda", "Ψ": r"\Psi", "Ω": r"\Omega", "Π": r"\Pi",
    "√": r"\surd", "‖": r"\|", "≤": r"\le", "≥": r"\ge", "×": r"\times", "·": r"\cdot", "∞": r"\infty",
    "⇒": r"\Rightarrow", "→": r"\to", "←": r"\leftarrow", "↔": r"\leftrightarrow", "≍": r"\asymp",
    "≈": r"\approx", "≠": r"\ne", "∈": r"\in", "±": r"\pm", "∘": r"\circ", "∑": r"\sum", "∫": r"\int",
    "∇": r"\nabla", "⊂": r"\subset", "∪": r"\cup", "∩": r"\cap", "∀": r"\forall", "∃": r"\exists",
    "ℓ": r"\ell", "𝒫": r"\mathcal{P}", "𝒬": r"\mathcal{Q}", "𝒱": r"\mathcal{V}", "ℝ": r"\mathbf{R}",
    "𝔼": r"\mathbf{E}", "⟨": r"\langle", "⟩": r"\rangle", "≡": r"\equiv", "∝": r"\propto", "∼": r"\sim",
    "∂": r"\partial", "∏": r"\prod", "∥": r"\|", "∣": "|", "⋅": r"\cdot", "−": "-", "≪": r"\ll", "≫": r"\gg",
    "ℕ": r"\mathbf{N}", "ℤ": r"\mathbf{Z}", "∅": r"\emptyset", "⊆": r"\subseteq", "∖": r"\setminus",
    "θ̂": r"\hat\theta", "⌈": r"\lceil", "⌉": r"\rceil", "⌊": r"\lfloor", "⌋": r"\rfloor",
    "²": "^2", "³": "^3", "¹": "^1", "⁻": "^-", "₀": "_0", "₁": "_1", "₂": "_2", "ᵢ": "_i", "ⱼ": "_j",
}
#: accents of Latin letters (OT1 text accents: no extra font needed)
_ACCENTS = {"\u0308": r'\"', "\u0301": r"\'", "\u0300": r"\`", "\u0302": r"\^", "\u0303": r"\~",
            "\u0327": r"\c", "\u030c": r"\v", "\u0304": r"\="}
_COMBINING = {"\u0302": r"\hat", "\u0304": r"\bar", "\u0303": r"\tilde", "\u0307": r"\dot"}
#: multi-character ASCII notation turned into math (applied before the character translation)
_TEX_SEQ = (("||", r"\ensuremath{\|}"), ("<=", r"\ensuremath{\le}"), (">=", r"\ensuremath{\ge}"),
            ("!=", r"\ensuremath{\ne}"))
_TEX_TEXT = {"–": "--", "—": "---", "§": r"\ensuremath{\mathsection}", "’": "'", "‘": "`", "“": "``", "”": "''",
             "…": r"\ldots{}", "\u00a0": "~", "•": r"\textbullet{}", "°": r"\ensuremath{^\circ}"}


def tex_text(s) -> str:
    """Plain text (possibly with Unicode math symbols) as ASCII LaTeX for text mode."""
    s = str(s)
    for seq, rep in _TEX_SEQ:
        s = s.replace(seq, "\x00" + rep + "\x01")
    out = []
    chars = list(s)
    i = 0
    raw = False
    while i < len(chars):
        ch = chars[i]
        nxt = chars[i + 1] if i + 1 < len(chars) else ""
        i += 1
        if ch == "\x00":
            raw = True
            continue
        if ch == "\x01":
            raw = False
            continue
        if raw:
            out.append(ch)
            continue
        if nxt in _COMBINING:
            i += 1
            inner = _TEX_UNICODE.get(ch, ch if ch.isascii() and ch.isalnum() else None)
            if inner is not None:
                out.append(r"\ensuremath{" + _COMBINING[nxt] + "{" + inner + "}}")
                continue
        if ch == "^" and nxt:
            if nxt == "{":
                depth, j = 0, i
                while j < len(chars):
                    depth += chars[j] == "{"
                    depth -= chars[j] == "}"
                    if depth == 0:
                        break
                    j += 1
                if j < len(chars):
                    out.append(r"\textsuperscript{" + tex_text("".join(chars[i + 1:j])) + "}")
                    i = j + 1
                    continue
            elif nxt.isalnum():
                out.append(r"\textsuperscript{" + tex_text(nxt) + "}")
                i += 1
                continue
        if ch in _TEX_CHARS:
            out.append(_TEX_CHARS[ch])
        elif ch in _TEX_TEXT:
            out.append(_TEX_TEXT[ch])
        elif ch in _TEX_UNICODE:
            cmd = _TEX_UNICODE[ch]
            out.append(r"\ensuremath{" + cmd + "}")
        elif ord(ch) < 128:
            out.append(ch)
        else:
            nfd = unicodedata.normalize("NFD", ch)
            if len(nfd) == 2 and nfd[0].isascii() and nfd[0].isalpha() and nfd[1] in _ACCENTS:
                out.append("{" + _ACCENTS[nfd[1]] + "{" + nfd[0] + "}}")
                continue
            base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
            if base and all(ord(c) < 128 for c in base):
                out.append(tex_text(base))
            elif unicodedata.category(ch).startswith("Z"):
                out.append(" ")
            else:
                out.append("?")
    return "".join(out)


def tex_math(expr) -> str:
    """A sympy expression as LaTeX math (without the dollars), in the papers' notation."""
    s = sp.latex(expr, fold_frac_powers=True)
    return s.replace(r"\epsilon", r"\varepsilon")


def tex_number(x, digits=3) -> str:
    """A number as LaTeX math (without the dollars): 2.35\\times 10^{-4}."""
    if x is None:
        return r"\text{--}"
    if x == 0:
        return "0"
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e6):
        return f"{int(x)}"
    if 1e-2 <= abs(x) < 1e4:
        return f"{x:.{digits}g}"
    m, e = f"{x:.{digits - 1}e}".split("e")
    return rf"{m}\times 10^{{{int(e)}}}"
