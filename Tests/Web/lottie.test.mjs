// Lottie animations drawn by the page (Web/app/lottie.js): checked, timed, eased, transformed, and
// drawn as canvas commands (a real canvas draws them in WebEmojiTests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLottie, frameAt, ease, valueAt, alongCurve, transformMatrix, multiply, drawFrame, contours, trimmed } from '../../Web/app/lottie.js';

const near = (actual, expected, message) => {
  const [a, b] = [[actual].flat(), [expected].flat()];
  assert.equal(a.length, b.length, message);
  a.forEach((value, index) => assert.ok(Math.abs(value - b[index]) < 1e-6, `${message ?? ''} ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`));
};

// A canvas context that writes down what it is told.
function recorder() {
  const calls = [];
  const context = { calls };
  for (const name of ['setTransform', 'clearRect', 'beginPath', 'moveTo', 'lineTo', 'bezierCurveTo', 'closePath', 'fillRect', 'rect', 'clip', 'save', 'restore']) {
    context[name] = (...args) => calls.push([name, ...args]);
  }
  context.fill = (rule) => calls.push(['fill', context.fillStyle, rule]);
  context.drawImage = (image) => calls.push(['drawImage', image.name, context.globalCompositeOperation]);
  context.stroke = () => calls.push(['stroke', context.strokeStyle, context.lineWidth]);
  context.createLinearGradient = (...args) => {
    const stops = [];
    calls.push(['linearGradient', ...args]);
    return { stops, addColorStop: (offset, colour) => stops.push([offset, colour]) };
  };
  return context;
}

// A red dot moving from x 20 to 80 over frames 0 to 30, at 30 frames a second, 100 x 100.
const dot = {
  v: '5.7.0', w: 100, h: 100, fr: 30, ip: 0, op: 60,
  layers: [{
    ty: 4, ind: 1, ip: 0, op: 60, st: 0,
    ks: { p: { a: 1, k: [{ t: 0, s: [20, 50], o: { x: [0], y: [0] }, i: { x: [1], y: [1] } }, { t: 30, s: [80, 50] }] }, a: { k: [0, 0] }, s: { k: [100, 100] }, r: { k: 0 }, o: { k: 100 } },
    shapes: [{ ty: 'gr', it: [{ ty: 'el', p: { k: [0, 0] }, s: { k: [10, 10] } }, { ty: 'fl', c: { k: [1, 0, 0, 1] }, o: { k: 100 } }, { ty: 'tr', p: { k: [0, 0] }, o: { k: 50 } }] }],
  }],
};

test('an animation is checked for what drawing it needs, with a clear reason', () => {
  const animation = parseLottie(JSON.stringify(dot));
  assert.deepEqual([animation.width, animation.height, animation.rate, animation.first, animation.last, animation.duration], [100, 100, 30, 0, 60, 2000]);
  assert.throws(() => parseLottie('[1, 2]'), /is a JSON object/);
  assert.throws(() => parseLottie('{"v": "5"}'), /its size/);
  assert.throws(() => parseLottie({ ...dot, fr: 0 }), /frame rate/);
  assert.throws(() => parseLottie({ ...dot, op: 0 }), /first and last frames/);
  assert.throws(() => parseLottie({ ...dot, layers: {} }), /its layers/);
  assert.throws(() => parseLottie('{"w": 1,'), SyntaxError);
});

test('time loops over the animation at its rate', () => {
  const animation = parseLottie({ ...dot, ip: 10, op: 40 });
  near(frameAt(animation, 0), 10);
  near(frameAt(animation, 500), 25);
  near(frameAt(animation, 1000), 10);
  near(frameAt(animation, 1100), 13);
});

test('easing curves: straight, eased in and out, and clamped', () => {
  for (const x of [0, 0.25, 0.5, 0.9, 1]) near(ease(0, 0, 1, 1, x), x);
  near(ease(0.42, 0, 0.58, 1, 0.5), 0.5);
  assert.ok(ease(0.42, 0, 0.58, 1, 0.2) < 0.2 && ease(0.42, 0, 0.58, 1, 0.8) > 0.8);
  near(ease(0.5, 0.5, 0.5, 0.5, -1), 0);
  near(ease(0.5, 0.5, 0.5, 0.5, 2), 1);
});

test('values: still, keyframed, held, eased per dimension, and paths', () => {
  assert.equal(valueAt({ a: 0, k: 7 }, 3), 7);
  const position = dot.layers[0].ks.p;
  near(valueAt(position, -5), [20, 50]);
  near(valueAt(position, 15), [50, 50]);
  near(valueAt(position, 99), [80, 50]);
  near(valueAt({ a: 1, k: [{ t: 0, s: [1], h: 1 }, { t: 10, s: [2] }] }, 9.9), [1]);
  // The old form: each keyframe's end in `e`.
  near(valueAt({ a: 1, k: [{ t: 0, s: [0], e: [10] }, { t: 10 }] }, 5), [5]);
  // x eased in, y straight.
  const perAxis = { a: 1, k: [{ t: 0, s: [0, 0], o: { x: [0.9, 0], y: [0, 0] }, i: { x: [1, 1], y: [1, 1] } }, { t: 10, s: [10, 10] }] };
  const [x, y] = valueAt(perAxis, 5);
  assert.ok(x < 4, `x eased in: ${x}`);
  near(y, 5);
  const path = (offset) => [{ c: true, v: [[offset, 0], [10, 0], [10, 10]], i: [[0, 0], [0, 0], [0, 0]], o: [[0, 0], [0, 0], [0, 0]] }];
  const halfway = valueAt({ a: 1, k: [{ t: 0, s: path(0) }, { t: 10, s: path(4) }] }, 5)[0];
  near(halfway.v.flat(), [2, 0, 10, 0, 10, 10]);
  assert.equal(halfway.c, true);
});

test('a position keyed with tangents moves along its curve, evenly by length', () => {
  // A quarter circle's worth of curve from (0, 0) to (10, 10), bulging towards (10, 0).
  const [out, into] = [[5.5, 0], [0, -5.5]];
  near(alongCurve([0, 0], [10, 10], out, into, 0), [0, 0]);
  near(alongCurve([0, 0], [10, 10], out, into, 1), [10, 10]);
  const [x, y] = alongCurve([0, 0], [10, 10], out, into, 0.5);
  assert.ok(Math.abs(x - 7.07) < 0.1 && Math.abs(y - 2.93) < 0.1, `halfway along the curve: ${x}, ${y}`);
  const position = { a: 1, k: [{ t: 0, s: [0, 0], to: out, ti: into, o: { x: 0, y: 0 }, i: { x: 1, y: 1 } }, { t: 10, s: [10, 10] }] };
  near(valueAt(position, 5), [x, y]);
  // Tangents of zero: a straight line, as without them.
  near(valueAt({ a: 1, k: [{ t: 0, s: [0, 0], to: [0, 0], ti: [0, 0] }, { t: 10, s: [10, 10] }] }, 5), [5, 5]);
});

test('a transform turns and scales about its anchor, then moves it to its position', () => {
  const matrix = transformMatrix({ a: { k: [10, 0] }, p: { k: [50, 50] }, s: { k: [200, 100] }, r: { k: 90 } }, 0);
  const apply = (m, [x, y]) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
  near(apply(matrix, [10, 0]), [50, 50]);
  near(apply(matrix, [11, 0]), [50, 52]); // twice as wide, turned a quarter clockwise (y down)
  near(apply(matrix, [10, 1]), [49, 50]);
  near(apply(transformMatrix({ p: { s: true, x: { k: 3 }, y: { k: 4 } } }, 0), [0, 0]), [3, 4]);
  near(multiply([2, 0, 0, 2, 1, 1], [1, 0, 0, 1, 5, 5]), [2, 0, 0, 2, 11, 11]);
});

test('a frame is drawn: the shape where its keyframes put it, with its fill and the group opacity', () => {
  const context = recorder();
  drawFrame(parseLottie(dot), context, 15, 200, 200);
  // A circle of radius 5 about the group's origin: four quarter curves from its top.
  near(context.calls.find((call) => call[0] === 'moveTo').slice(1), [0, -5]);
  near(context.calls.filter((call) => call[0] === 'bezierCurveTo').map((call) => call.slice(5)).flat(), [5, 0, 0, 5, -5, 0, 0, -5]);
  const transforms = context.calls.filter((call) => call[0] === 'setTransform');
  // Scaled twice to fit 200 x 200, the dot halfway along: x 50, y 50 in the animation.
  near(transforms[1].slice(1), [2, 0, 0, 2, 100, 100]);
  assert.deepEqual(context.calls.find((call) => call[0] === 'fill'), ['fill', 'rgba(255, 0, 0, 0.5)', 'nonzero']);
});

test('out of its frames, hidden or a matte, a layer is not drawn; parents and precompositions are', () => {
  const layer = dot.layers[0];
  const hidden = { ...dot, layers: [{ ...layer, ip: 40 }, { ...layer, hd: true }, { ...layer, td: 1 }] };
  const context = recorder();
  drawFrame(parseLottie(hidden), context, 10, 100, 100);
  assert.equal(context.calls.filter((call) => call[0] === 'fill').length, 0);

  // A null parent moves its child 10 to the right; a precomposition of the dot starts 10 frames late.
  const parent = { ty: 3, ind: 2, ks: { p: { k: [10, 0] } } };
  const child = { ...layer, parent: 2, ks: { ...layer.ks, p: { k: [20, 50] } } };
  const parented = recorder();
  drawFrame(parseLottie({ ...dot, layers: [child, parent] }), parented, 0, 100, 100);
  near(parented.calls.filter((call) => call[0] === 'setTransform')[1].slice(1), [1, 0, 0, 1, 30, 50]);

  const precomposed = { ...dot, assets: [{ id: 'inner', layers: [layer] }], layers: [{ ty: 0, refId: 'inner', ind: 3, ip: 0, op: 60, st: 10, ks: {} }] };
  const late = recorder();
  drawFrame(parseLottie(precomposed), late, 25, 100, 100);
  near(late.calls.filter((call) => call[0] === 'setTransform')[1].slice(1), [1, 0, 0, 1, 50, 50]);
});

test('paths, rectangles and strokes; gradients with their stops', () => {
  const shapes = [
    { ty: 'sh', ks: { k: { c: true, v: [[0, 0], [10, 0], [10, 10]], i: [[0, 0], [0, 0], [0, 0]], o: [[1, 0], [0, 0], [0, 0]] } } },
    { ty: 'rc', p: { k: [50, 50] }, s: { k: [20, 10] }, r: { k: 0 } },
    { ty: 'st', c: { k: [0, 0, 1] }, o: { k: 100 }, w: { k: 3 } },
    { ty: 'gf', t: 1, s: { k: [0, 0] }, e: { k: [100, 0] }, g: { p: 2, k: { k: [0, 1, 0, 0, 1, 0, 0, 1] } }, o: { k: 100 } },
  ];
  const context = recorder();
  drawFrame(parseLottie({ ...dot, layers: [{ ty: 4, ip: 0, op: 60, ks: {}, shapes }] }), context, 0, 100, 100);
  const names = context.calls.map((call) => call[0]);
  // Each shape: its outline, then the gradient fill (the lower style), then the stroke.
  assert.deepEqual(names.filter((name) => ['moveTo', 'bezierCurveTo', 'arcTo', 'closePath', 'fill', 'stroke'].includes(name)), [
    'moveTo', ...Array(8).fill('bezierCurveTo'), 'closePath', 'fill', 'stroke',
    'moveTo', 'bezierCurveTo', 'bezierCurveTo', 'bezierCurveTo', 'closePath', 'fill', 'stroke',
  ]);
  // The rectangle's corners are square (no roundness): it starts at its top right.
  near(context.calls.find((call) => call[0] === 'moveTo').slice(1), [60, 45]);
  const pathStart = context.calls.findIndex((call) => call[0] === 'moveTo' && call[1] === 0);
  assert.deepEqual(context.calls[pathStart + 1], ['bezierCurveTo', 1, 0, 10, 0, 10, 0]);
  assert.deepEqual(context.calls.find((call) => call[0] === 'stroke'), ['stroke', 'rgba(0, 0, 255, 1)', 3]);
  const gradient = context.calls.find((call) => call[0] === 'fill')[1];
  assert.deepEqual(gradient.stops, [[0, 'rgba(255, 0, 0, 1)'], [1, 'rgba(0, 0, 255, 1)']]);
});

test('trim paths cut a shape by its length, wrapping past its end, and shapes keep their own', () => {
  // A 10 x 10 square from its top right, clockwise: 40 long.
  const square = contours({ ty: 'rc', p: { k: [5, 5] }, s: { k: [10, 10] }, r: { k: 0 } }, 0);
  const ends = (shape) => shape.map(({ start, curves }) => [start, curves.at(-1).slice(4)]);
  assert.equal(trimmed(square, 0, 1), square);
  assert.deepEqual(trimmed(square, 0.5, 0.5), []);
  // The first quarter: the right edge, top to bottom (its corner is a curve of no size).
  near(ends(trimmed(square, 0, 0.25)).flat(2), [10, 0, 10, 10]);
  // From the middle of the right edge to the middle of the bottom one.
  near(ends(trimmed(square, 0.125, 0.375)).flat(2), [10, 5, 5, 10]);
  // Wrapping: the last eighth (half the top edge) and the first eighth (half the right one), two pieces.
  near(ends(trimmed(square, 0.875, 1.125)).flat(2), [5, 0, 10, 0, 10, 0, 10, 5]);
  assert.ok(trimmed(square, 0, 0.5).every((contour) => !contour.closed));

  // Drawn: a stroke of the first half of a line, the trim after it in its group.
  const shapes = [{ ty: 'gr', it: [
    { ty: 'sh', ks: { k: { c: false, v: [[0, 0], [100, 0]], i: [[0, 0], [0, 0]], o: [[0, 0], [0, 0]] } } },
    { ty: 'tm', s: { k: 0 }, e: { a: 1, k: [{ t: 0, s: [0] }, { t: 10, s: [100] }] }, o: { k: 0 } },
    { ty: 'st', c: { k: [0, 0, 0] }, o: { k: 100 }, w: { k: 2 } },
  ] }];
  const context = recorder();
  drawFrame(parseLottie({ ...dot, layers: [{ ty: 4, ip: 0, op: 60, ks: {}, shapes }] }), context, 5, 100, 100);
  near(context.calls.find((call) => call[0] === 'bezierCurveTo').slice(5), [50, 0]);
  const before = recorder();
  drawFrame(parseLottie({ ...dot, layers: [{ ty: 4, ip: 0, op: 60, ks: {}, shapes }] }), before, 0, 100, 100);
  assert.equal(before.calls.filter((call) => call[0] === 'stroke').length, 0, 'nothing of the line is drawn at 0%');
});

test('masks clip their layer: within the added, outside the subtracted, and only their layer', () => {
  const square = (x) => ({ c: true, v: [[x, 0], [x + 10, 0], [x + 10, 10], [x, 10]], i: Array(4).fill([0, 0]), o: Array(4).fill([0, 0]) });
  const masked = { ...dot.layers[0], masksProperties: [{ mode: 'a', pt: { k: square(0) } }, { mode: 's', pt: { k: square(5) } }, { mode: 'n', pt: { k: square(50) } }] };
  const context = recorder();
  drawFrame(parseLottie({ ...dot, layers: [masked, dot.layers[0]] }), context, 0, 100, 100);
  const names = context.calls.map((call) => call[0]).filter((name) => ['save', 'restore', 'clip', 'rect', 'fill'].includes(name));
  // The unmasked layer (drawn first: it is under), then the masked one inside save and restore.
  assert.deepEqual(names, ['fill', 'save', 'clip', 'rect', 'clip', 'fill', 'restore']);
  assert.deepEqual(context.calls.filter((call) => call[0] === 'clip').map((call) => call[1]), ['nonzero', 'evenodd']);
  // Each mask's outline is traced once, the one of mode 'n' not at all.
  const starts = context.calls.filter((call) => call[0] === 'moveTo' && call[2] === 0).map((call) => call[1]);
  assert.deepEqual(starts, [0, 5]);
});

test('a track matte keeps its layer where the matte is drawn (or, inverted, where it is not)', () => {
  // Canvases made for the layer and its matte, each writing down what it is told.
  const made = [];
  const page = { createElement: () => {
    const canvas = { name: `canvas ${made.length}` };
    canvas.getContext = () => (canvas.context ??= recorder());
    made.push(canvas);
    return canvas;
  } };
  const matte = { ...dot.layers[0], td: 1, ind: 5, ks: { ...dot.layers[0].ks, p: { k: [70, 50] } } };
  for (const [tt, operation] of [[1, 'destination-in'], [2, 'destination-out']]) {
    made.length = 0;
    const context = recorder();
    context.canvas = { width: 100, height: 100, ownerDocument: page };
    drawFrame(parseLottie({ ...dot, layers: [matte, { ...dot.layers[0], tt }] }), context, 0, 100, 100);
    assert.deepEqual(made.map((canvas) => [canvas.width, canvas.height]), [[100, 100], [100, 100]]);
    const [content, shape] = made.map((canvas) => canvas.context.calls);
    // The layer's dot at x 20, the matte's at 70; combined on the layer's canvas, which is drawn.
    near(content.filter((call) => call[0] === 'setTransform')[0].slice(5), [20, 50]);
    near(shape.filter((call) => call[0] === 'setTransform')[0].slice(5), [70, 50]);
    assert.deepEqual(content.find((call) => call[0] === 'drawImage'), ['drawImage', 'canvas 1', operation]);
    assert.deepEqual(context.calls.filter((call) => call[0] === 'drawImage'), [['drawImage', 'canvas 0', undefined]]);
    assert.equal(context.calls.filter((call) => call[0] === 'fill').length, 0, 'nothing drawn straight on the page');
  }
  // With no page to make canvases: the layer alone.
  const bare = recorder();
  drawFrame(parseLottie({ ...dot, layers: [matte, { ...dot.layers[0], tt: 1 }] }), bare, 0, 100, 100);
  assert.equal(bare.calls.filter((call) => call[0] === 'fill').length, 1);
});
