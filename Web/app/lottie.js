// Lottie animations (the Bodymovin JSON of docs/protocol.md section 19's `lottie` items) drawn on
// a canvas. What is drawn: shape layers (groups, paths, rectangles, ellipses, stars and polygons,
// solid and gradient fills and strokes, trim paths, each group's transform and opacity), solid
// layers, precompositions, null layers as parents, every layer's transform through its parents,
// its in and out points, start time and stretch; animated values with their easing curves, or
// held, and positions along their motion paths; layers' masks (added, subtracted, intersected,
// inverted) and track mattes (alpha; luma read as alpha). What is left undrawn: images, text,
// repeaters, expressions, and masks' opacity and feather. Knows nothing of the page.

// The animation in `source` (its JSON text or the parsed object), checked for what drawing needs:
// {width, height, rate (frames a second), first, last (frames), duration (ms), layers, assets}.
export function parseLottie(source) {
  const data = typeof source === 'string' ? JSON.parse(source) : source;
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('a Lottie animation is a JSON object');
  const { w, h, fr, ip, op, layers } = data;
  const finite = (value) => typeof value === 'number' && Number.isFinite(value);
  if (!finite(w) || !finite(h) || w <= 0 || h <= 0 || w > 8192 || h > 8192) throw new Error('a Lottie animation needs its size (w, h)');
  if (!finite(fr) || fr <= 0 || fr > 240) throw new Error('a Lottie animation needs its frame rate (fr)');
  if (!finite(ip) || !finite(op) || op <= ip) throw new Error('a Lottie animation needs its first and last frames (ip < op)');
  if (!Array.isArray(layers)) throw new Error('a Lottie animation needs its layers');
  const assets = new Map((Array.isArray(data.assets) ? data.assets : []).filter((asset) => Array.isArray(asset?.layers)).map((asset) => [asset.id, asset.layers]));
  return { width: w, height: h, rate: fr, first: ip, last: op, duration: Math.round(((op - ip) / fr) * 1000), layers, assets };
}

// The frame to show `elapsed` ms after the animation started, looping.
export function frameAt(animation, elapsed) {
  const span = animation.last - animation.first;
  return animation.first + ((((elapsed / 1000) * animation.rate) % span) + span) % span;
}

// y for x on an easing curve from (0, 0) to (1, 1) with control points (x1, y1) and (x2, y2).
export function ease(x1, y1, x2, y2, x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const cubic = (t, a, b) => 3 * (1 - t) * (1 - t) * t * a + 3 * (1 - t) * t * t * b + t * t * t;
  const [c1, c2] = [Math.min(1, Math.max(0, x1)), Math.min(1, Math.max(0, x2))];
  let low = 0;
  let high = 1;
  let t = x;
  for (let step = 0; step < 40; step += 1) {
    const at = cubic(t, c1, c2);
    if (Math.abs(at - x) < 1e-7) break;
    if (at < x) low = t;
    else high = t;
    t = (low + high) / 2;
  }
  return cubic(t, y1, y2);
}

const first = (value) => (Array.isArray(value) ? value[0] : value);
const number = (value, fallback = 0) => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);

// Between two values (numbers, lists of numbers, or paths) at `share` of the way, a share for each
// dimension when `shares` is a list.
function mix(from, to, shares) {
  const share = (index) => (Array.isArray(shares) ? number(shares[index], shares[0]) : shares);
  if (typeof from === 'number' && typeof to === 'number') return from + (to - from) * share(0);
  if (Array.isArray(from) && Array.isArray(to)) return from.map((value, index) => mixOne(value, to[index], share(index)));
  if (from && typeof from === 'object' && Array.isArray(from.v) && to && Array.isArray(to.v)) {
    const points = (key) => from[key].map((point, index) => point.map((value, axis) => value + (number(to[key][index]?.[axis], value) - value) * share(0)));
    return { c: from.c, v: points('v'), i: points('i'), o: points('o') };
  }
  return from;
}

function mixOne(from, to, share) {
  if (typeof from === 'number') return from + (number(to, from) - from) * share;
  return mix(from, to, share);
}

// A property's value at `time` (frames in its layer's time): its value, or its keyframes'.
export function valueAt(property, time) {
  if (!property || typeof property !== 'object') return undefined;
  const keys = property.k;
  if (!property.a || !Array.isArray(keys) || keys.length === 0 || typeof keys[0] !== 'object' || !('t' in keys[0])) return keys;
  if (time <= keys[0].t) return keys[0].s;
  for (let index = 0; index < keys.length - 1; index += 1) {
    const key = keys[index];
    const next = keys[index + 1];
    if (time >= next.t) continue;
    const to = key.e ?? next.s;
    if (key.h === 1 || to === undefined || next.t <= key.t) return key.s;
    const x = (time - key.t) / (next.t - key.t);
    const curve = (axis) => ease(number(first(key.o?.x?.[axis] ?? key.o?.x), 0), number(first(key.o?.y?.[axis] ?? key.o?.y), 0),
      number(first(key.i?.x?.[axis] ?? key.i?.x), 1), number(first(key.i?.y?.[axis] ?? key.i?.y), 1), x);
    // A position that moves along a curve (its keyframe's spatial tangents `to` and `ti`).
    if (Array.isArray(key.to) && Array.isArray(key.ti) && [...key.to, ...key.ti].some((value) => value !== 0) && Array.isArray(key.s) && Array.isArray(to)) {
      return alongCurve(key.s, to, key.to, key.ti, curve(0));
    }
    const dimensions = Array.isArray(key.o?.x) ? key.o.x.length : 1;
    return mix(key.s, to, dimensions > 1 ? Array.from({ length: dimensions }, (_, axis) => curve(axis)) : curve(0));
  }
  const last = keys[keys.length - 1];
  return last.s ?? keys[keys.length - 2]?.e;
}

// The point `share` of the way along the curve from `from` to `to` (by its length, as a motion
// path is travelled), leaving along `out` and arriving along `into`.
export function alongCurve(from, to, out, into, share) {
  const at = (t) => from.map((start, axis) => {
    const [a, b, c, d] = [number(start), number(start) + number(out[axis]), number(to[axis]) + number(into[axis]), number(to[axis])];
    return (1 - t) ** 3 * a + 3 * (1 - t) ** 2 * t * b + 3 * (1 - t) * t * t * c + t ** 3 * d;
  });
  const steps = 32;
  const lengths = [0];
  let previous = at(0);
  for (let step = 1; step <= steps; step += 1) {
    const next = at(step / steps);
    lengths.push(lengths[step - 1] + Math.hypot(...next.map((value, axis) => value - previous[axis])));
    previous = next;
  }
  const wanted = Math.min(1, Math.max(0, share)) * lengths[steps];
  let step = 1;
  while (step < steps && lengths[step] < wanted) step += 1;
  const span = lengths[step] - lengths[step - 1];
  return at((step - 1 + (span > 0 ? (wanted - lengths[step - 1]) / span : 0)) / steps);
}

// A number's value (a keyframe's list of one, or a number).
const scalar = (property, time, fallback) => number(first(valueAt(property, time)), fallback);
// A point's value.
const point = (property, time, fallback = [0, 0]) => {
  const value = valueAt(property, time);
  return Array.isArray(value) ? [number(value[0], fallback[0]), number(value[1], fallback[1])] : fallback;
};

// 2-D affine matrices as the canvas takes them: [a, b, c, d, e, f] maps (x, y) to
// (a x + c y + e, b x + d y + f).
export const identity = [1, 0, 0, 1, 0, 0];

export function multiply(m, n) {
  return [
    m[0] * n[0] + m[2] * n[1], m[1] * n[0] + m[3] * n[1],
    m[0] * n[2] + m[2] * n[3], m[1] * n[2] + m[3] * n[3],
    m[0] * n[4] + m[2] * n[5] + m[4], m[1] * n[4] + m[3] * n[5] + m[5],
  ];
}

// A transform's matrix at `time`: position, rotation, skew and scale about the anchor.
export function transformMatrix(transform, time) {
  if (!transform) return identity;
  const anchor = point(transform.a, time);
  const position = transform.p?.s ? [scalar(transform.p.x, time, 0), scalar(transform.p.y, time, 0)] : point(transform.p, time);
  const scale = point(transform.s, time, [100, 100]);
  const radians = (scalar(transform.r ?? transform.rz, time, 0) * Math.PI) / 180;
  const skew = (-scalar(transform.sk, time, 0) * Math.PI) / 180;
  const skewAxis = (scalar(transform.sa, time, 0) * Math.PI) / 180;
  let matrix = [1, 0, 0, 1, position[0], position[1]];
  matrix = multiply(matrix, [Math.cos(radians), Math.sin(radians), -Math.sin(radians), Math.cos(radians), 0, 0]);
  if (skew !== 0) {
    const [cos, sin] = [Math.cos(skewAxis), Math.sin(skewAxis)];
    matrix = multiply(matrix, [cos, sin, -sin, cos, 0, 0]);
    matrix = multiply(matrix, [1, 0, Math.tan(skew), 1, 0, 0]);
    matrix = multiply(matrix, [cos, -sin, sin, cos, 0, 0]);
  }
  matrix = multiply(matrix, [scale[0] / 100, 0, 0, scale[1] / 100, 0, 0]);
  return multiply(matrix, [1, 0, 0, 1, -anchor[0], -anchor[1]]);
}

// Draws frame `frame` of `animation` on `context` (a canvas's 2-D context, or anything with its
// methods), fitted within `width` x `height` and centred.
export function drawFrame(animation, context, frame, width, height) {
  const fit = Math.min(width / animation.width, height / animation.height);
  const base = [fit, 0, 0, fit, (width - animation.width * fit) / 2, (height - animation.height * fit) / 2];
  context.setTransform(1, 0, 0, 1, 0, 0);
  context.clearRect(0, 0, width, height);
  drawLayers(animation, animation.layers, context, frame, base, 1, 0);
  context.setTransform(1, 0, 0, 1, 0, 0);
  context.globalAlpha = 1;
}

function drawLayers(animation, layers, context, time, base, opacity, depth) {
  if (depth > 8) return; // precompositions nested deeper than any real animation: a loop
  const byIndex = new Map(layers.filter((layer) => layer && layer.ind !== undefined).map((layer) => [layer.ind, layer]));
  // A layer's own time, and its matrix through its parents.
  const local = (layer) => (time - number(layer.st, 0)) / number(layer.sr, 1);
  const matrixOf = (layer, seen = new Set()) => {
    const own = transformMatrix(layer.ks, local(layer));
    const parent = layer.parent !== undefined ? byIndex.get(layer.parent) : undefined;
    if (!parent || seen.has(parent)) return own;
    seen.add(layer);
    return multiply(matrixOf(parent, seen), own);
  };
  const drawLayer = (layer, target) => {
    if (time < number(layer.ip, -Infinity) || time >= number(layer.op, Infinity)) return;
    const layerTime = local(layer);
    const matrix = multiply(base, matrixOf(layer));
    const alpha = opacity * (scalar(layer.ks?.o, layerTime, 100) / 100);
    if (alpha <= 0) return;
    const masks = Array.isArray(layer.masksProperties) ? layer.masksProperties.filter((mask) => mask && typeof mask === 'object' && mask.mode !== 'n') : [];
    if (masks.length > 0) {
      target.save();
      clip(target, masks, layerTime, matrix);
    }
    if (layer.ty === 4 && Array.isArray(layer.shapes)) {
      drawItems(target, layer.shapes, layerTime, matrix, alpha, [], []);
    } else if (layer.ty === 1) {
      target.setTransform(...matrix);
      target.globalAlpha = alpha;
      target.fillStyle = typeof layer.sc === 'string' ? layer.sc : '#000';
      target.fillRect(0, 0, number(layer.sw), number(layer.sh));
      target.globalAlpha = 1;
    } else if (layer.ty === 0 && animation.assets.has(layer.refId)) {
      drawLayers(animation, animation.assets.get(layer.refId), target, layerTime, matrix, alpha, depth + 1);
    }
    if (masks.length > 0) target.restore();
  };
  for (let index = layers.length - 1; index >= 0; index -= 1) {
    const layer = layers[index];
    if (!layer || typeof layer !== 'object' || layer.hd || layer.td) continue;
    // A track matte: the layer above, drawn apart; this one is kept where it is opaque (1) or
    // clear (2), luma mattes (3, 4) read by their opacity as well.
    const matte = layers[index - 1];
    const surface = layer.tt && matte?.td ? offscreen(context) : null;
    if (!surface) {
      drawLayer(layer, context);
      continue;
    }
    const [content, shape] = [surface(), surface()];
    drawLayer(layer, content.getContext('2d'));
    drawLayer(matte, shape.getContext('2d'));
    const combined = content.getContext('2d');
    combined.setTransform(1, 0, 0, 1, 0, 0);
    combined.globalCompositeOperation = layer.tt === 2 || layer.tt === 4 ? 'destination-out' : 'destination-in';
    combined.drawImage(shape, 0, 0);
    context.setTransform(1, 0, 0, 1, 0, 0);
    context.drawImage(content, 0, 0);
  }
}

// A maker of blank canvases the size of `context`'s, from its page (null where there is none: the
// layer is drawn without its matte).
function offscreen(context) {
  const { width, height, ownerDocument } = context.canvas ?? {};
  if (!width || !height || typeof ownerDocument?.createElement !== 'function') return null;
  return () => Object.assign(ownerDocument.createElement('canvas'), { width, height });
}

// Clips what a layer draws to its masks: within the added ones (together), outside the
// subtracted ones, and within each intersected one (an inverted mask the other way round). Their
// opacity and feather are not drawn.
function clip(context, masks, time, matrix) {
  context.setTransform(...matrix);
  const outline = (mask) => contours({ ty: 'sh', ks: mask.pt }, time);
  const outside = (mask) => {
    context.beginPath();
    context.rect(-1e6, -1e6, 2e6, 2e6);
    trace(context, outline(mask));
    context.clip('evenodd');
  };
  const added = masks.filter((mask) => mask.mode === 'a' && !mask.inv);
  if (added.length > 0) {
    context.beginPath();
    for (const mask of added) trace(context, outline(mask));
    context.clip('nonzero');
  }
  for (const mask of masks) {
    const inverted = Boolean(mask.inv);
    if ((mask.mode === 's' && !inverted) || ((mask.mode === 'a' || mask.mode === 'i') && inverted)) {
      outside(mask);
    } else if ((mask.mode === 'i' && !inverted) || (mask.mode === 's' && inverted)) {
      context.beginPath();
      trace(context, outline(mask));
      context.clip('nonzero');
    }
  }
}

// A group's items, last (undermost) first: each shape is painted with the fills and strokes that
// follow it in its group and the groups around it, and cut by the trim paths that follow it
// (each shape on its own).
function drawItems(context, items, time, outer, opacity, outerStyles, outerTrims) {
  const transform = items.find((item) => item?.ty === 'tr');
  const matrix = transform ? multiply(outer, transformMatrix(transform, time)) : outer;
  const alpha = transform ? opacity * (scalar(transform.o, time, 100) / 100) : opacity;
  let styles = outerStyles;
  let trims = outerTrims;
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index];
    if (!item || typeof item !== 'object' || item.hd) continue;
    if (item.ty === 'fl' || item.ty === 'st' || item.ty === 'gf' || item.ty === 'gs') {
      styles = [...styles, { item, alpha }];
    } else if (item.ty === 'tm') {
      trims = [...trims, item];
    } else if (item.ty === 'gr' && Array.isArray(item.it)) {
      drawItems(context, item.it, time, matrix, alpha, styles, trims);
    } else if (item.ty === 'sh' || item.ty === 'rc' || item.ty === 'el' || item.ty === 'sr') {
      if (styles.length === 0) continue;
      let shape = contours(item, time);
      for (const trim of trims) {
        // Start and end in percent of the length, moved along by the offset (degrees: 360 is once round).
        const shift = scalar(trim.o, time, 0) / 360;
        const [a, b] = [scalar(trim.s, time, 0) / 100 + shift, scalar(trim.e, time, 100) / 100 + shift];
        shape = trimmed(shape, Math.min(a, b), Math.max(a, b));
      }
      if (shape.length === 0) continue;
      context.setTransform(...matrix);
      context.beginPath();
      trace(context, shape);
      for (const style of styles) paint(context, style, time);
    }
  }
}

// A shape's outline as contours of cubic curves: {start: [x, y], curves: [[x1, y1, x2, y2, x, y]],
// closed}.
export function contours(item, time) {
  const line = ([x0, y0], [x, y]) => [x0 + (x - x0) / 3, y0 + (y - y0) / 3, x - (x - x0) / 3, y - (y - y0) / 3, x, y];
  if (item.ty === 'sh') {
    const path = first(valueAt(item.ks, time));
    const vertices = path?.v;
    if (!Array.isArray(vertices) || vertices.length === 0) return [];
    const at = (list, index) => [number(list?.[index]?.[0]), number(list?.[index]?.[1])];
    const curve = (from, to) => {
      const [a, b, c, end] = [at(vertices, from), at(path.o, from), at(path.i, to), at(vertices, to)];
      return [a[0] + b[0], a[1] + b[1], end[0] + c[0], end[1] + c[1], end[0], end[1]];
    };
    const curves = [];
    for (let index = 1; index < vertices.length; index += 1) curves.push(curve(index - 1, index));
    if (path.c) curves.push(curve(vertices.length - 1, 0));
    return [{ start: at(vertices, 0), curves, closed: Boolean(path.c) }];
  }
  const [x, y] = point(item.p, time);
  if (item.ty === 'rc' || item.ty === 'el') {
    const [w, h] = point(item.s, time).map(Math.abs);
    // A quarter of a circle of radius r as one cubic curve: its handles 0.5523 r long.
    const k = 0.5523;
    if (item.ty === 'el') {
      const [rx, ry] = [w / 2, h / 2];
      return [{ start: [x, y - ry], closed: true, curves: [
        [x + k * rx, y - ry, x + rx, y - k * ry, x + rx, y], [x + rx, y + k * ry, x + k * rx, y + ry, x, y + ry],
        [x - k * rx, y + ry, x - rx, y + k * ry, x - rx, y], [x - rx, y - k * ry, x - k * rx, y - ry, x, y - ry],
      ] }];
    }
    const r = Math.min(Math.max(0, scalar(item.r, time, 0)), w / 2, h / 2);
    const [left, top, right, bottom] = [x - w / 2, y - h / 2, x + w / 2, y + h / 2];
    const corner = (fromX, fromY, cornerX, cornerY, toX, toY) => [fromX + (cornerX - fromX) * k, fromY + (cornerY - fromY) * k, toX + (cornerX - toX) * k, toY + (cornerY - toY) * k, toX, toY];
    // Clockwise from the top edge's right end, as After Effects draws a rectangle.
    const curves = [
      corner(right - r, top, right, top, right, top + r), line([right, top + r], [right, bottom - r]),
      corner(right, bottom - r, right, bottom, right - r, bottom), line([right - r, bottom], [left + r, bottom]),
      corner(left + r, bottom, left, bottom, left, bottom - r), line([left, bottom - r], [left, top + r]),
      corner(left, top + r, left, top, left + r, top), line([left + r, top], [right - r, top]),
    ];
    return [{ start: [right - r, top], closed: true, curves }];
  }
  if (item.ty === 'sr') {
    const count = Math.max(3, Math.min(100, Math.round(scalar(item.pt, time, 5))));
    const outer = scalar(item.or, time, 0);
    const inner = item.sy === 2 ? outer : scalar(item.ir, time, 0);
    const turn = ((scalar(item.r, time, 0) - 90) * Math.PI) / 180;
    const corners = item.sy === 2 ? count : count * 2;
    const points = Array.from({ length: corners }, (_, corner) => {
      const radius = corner % 2 === 0 || item.sy === 2 ? outer : inner;
      const angle = turn + (corner * 2 * Math.PI) / corners;
      return [x + radius * Math.cos(angle), y + radius * Math.sin(angle)];
    });
    return [{ start: points[0], closed: true, curves: points.map((from, index) => line(from, points[(index + 1) % corners])) }];
  }
  return [];
}

// The part of `shape` (contours) between `from` and `to`, shares of its whole length: a trim
// path's cut (both wrap past the end: 0.9 to 1.2 is the last tenth and the first fifth).
export function trimmed(shape, from, to) {
  if (to - from >= 1) return shape;
  if (to <= from) return [];
  // Each curve's length, from 16 chords.
  const pieces = [];
  for (const contour of shape) {
    let start = contour.start;
    for (const curve of contour.curves) {
      let length = 0;
      let previous = start;
      for (let step = 1; step <= 16; step += 1) {
        const next = pointOn(start, curve, step / 16);
        length += Math.hypot(next[0] - previous[0], next[1] - previous[1]);
        previous = next;
      }
      pieces.push({ start, curve, length });
      start = [curve[4], curve[5]];
    }
  }
  const total = pieces.reduce((sum, piece) => sum + piece.length, 0);
  if (total <= 0) return [];
  const out = [];
  // The window once or, where it wraps, as two: [from, 1) and [0, to - 1).
  const offset = Math.floor(from);
  const windows = to - offset > 1 ? [[from - offset, 1], [0, to - offset - 1]] : [[from - offset, to - offset]];
  for (const [low, high] of windows) {
    let walked = 0;
    let contour = null;
    for (const piece of pieces) {
      const [a, b] = [walked / total, (walked + piece.length) / total];
      walked += piece.length;
      if (piece.length === 0) continue; // a corner of no size: the outline goes on through it
      if (b <= low || a >= high) {
        contour = null;
        continue;
      }
      const t0 = Math.max(0, (low - a) / (b - a));
      const t1 = Math.min(1, (high - a) / (b - a));
      const part = split(piece.start, piece.curve, t0, t1);
      const begins = [part.start[0], part.start[1]];
      if (!contour || Math.hypot(contour.end[0] - begins[0], contour.end[1] - begins[1]) > 1e-6) {
        contour = { start: begins, curves: [], closed: false, end: begins };
        out.push(contour);
      }
      contour.curves.push(part.curve);
      contour.end = [part.curve[4], part.curve[5]];
    }
  }
  return out.map(({ start, curves }) => ({ start, curves, closed: false }));
}

// The point at `t` on the cubic curve from `start`.
function pointOn(start, [x1, y1, x2, y2, x, y], t) {
  const u = 1 - t;
  return [u * u * u * start[0] + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t * t * t * x, u * u * u * start[1] + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t * t * t * y];
}

// The cubic curve from `start` between parameters t0 and t1 (de Casteljau).
function split(start, curve, t0, t1) {
  const cut = (p0, [x1, y1, x2, y2, x, y], t) => {
    // The part after t, as a curve from the point at t.
    const lerp = (a, b) => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
    const [p1, p2, p3] = [[x1, y1], [x2, y2], [x, y]];
    const [a, b, c] = [lerp(p0, p1), lerp(p1, p2), lerp(p2, p3)];
    const [d, e] = [lerp(a, b), lerp(b, c)];
    const f = lerp(d, e);
    return { before: { start: p0, curve: [...a, ...d, ...f] }, after: { start: f, curve: [...e, ...c, ...p3] } };
  };
  let part = { start, curve };
  if (t0 > 0) part = cut(part.start, part.curve, t0).after;
  if (t1 < 1) part = cut(part.start, part.curve, (t1 - t0) / (1 - t0)).before;
  return part;
}

// Contours as path commands.
function trace(context, shape) {
  for (const contour of shape) {
    context.moveTo(...contour.start);
    for (const curve of contour.curves) context.bezierCurveTo(...curve);
    if (contour.closed) context.closePath();
  }
}

// A colour, [r, g, b] from 0 to 1, with `alpha`.
function colour(value, alpha) {
  const [r, g, b] = [0, 1, 2].map((index) => Math.round(Math.min(1, Math.max(0, number(value?.[index]))) * 255));
  return `rgba(${r}, ${g}, ${b}, ${Math.min(1, Math.max(0, alpha))})`;
}

function paint(context, { item, alpha }, time) {
  const shown = alpha * (scalar(item.o, time, 100) / 100);
  if (shown <= 0) return;
  context.globalAlpha = 1;
  let style = colour(valueAt(item.c, time), shown);
  if (item.ty === 'gf' || item.ty === 'gs') style = gradient(context, item, time, shown);
  if (item.ty === 'fl' || item.ty === 'gf') {
    context.fillStyle = style;
    context.fill(item.r === 2 ? 'evenodd' : 'nonzero');
  } else {
    context.strokeStyle = style;
    context.lineWidth = Math.max(0, scalar(item.w, time, 1));
    context.lineCap = ['butt', 'butt', 'round', 'square'][item.lc] ?? 'butt';
    context.lineJoin = ['miter', 'miter', 'round', 'bevel'][item.lj] ?? 'miter';
    context.miterLimit = number(item.ml, 4);
    if (context.lineWidth > 0) context.stroke();
  }
}

// A gradient fill's or stroke's gradient: linear or radial, its colour stops (offset, r, g, b).
function gradient(context, item, time, alpha) {
  const [start, end] = [point(item.s, time), point(item.e, time)];
  const made = item.t === 2
    ? context.createRadialGradient(start[0], start[1], 0, start[0], start[1], Math.hypot(end[0] - start[0], end[1] - start[1]))
    : context.createLinearGradient(start[0], start[1], end[0], end[1]);
  const stops = valueAt(item.g?.k, time) ?? [];
  const count = Math.max(0, Math.min(number(item.g?.p), Math.floor(stops.length / 4)));
  for (let index = 0; index < count; index += 1) {
    const [offset, r, g, b] = stops.slice(index * 4, index * 4 + 4);
    made.addColorStop(Math.min(1, Math.max(0, number(offset))), colour([r, g, b], alpha));
  }
  return made;
}
