// rewind dap driven by VS Code's own DAP test client (DebugClient of
// @vscode/debugadapter-testsupport), the library adapter authors test
// with. e2e/vscode_test.go records the programs and runs this file with
// `node --test`, naming what it needs in the environment:
//
//   REWIND          the rewind binary (started as `rewind dap` on stdio)
//   STEPS_TRACE     a recording of testdata/source/steps.c
//   STEPS_SRC       that source's path, as the frames name it
//   STEPS_PROG      the built steps program (launch records it itself)
//   CORRUPT_TRACE   a recording of testdata/source/corrupt.c (a SIGSEGV)
//   CORRUPT_SRC     its source's path
//   WORK            a directory the test may write to
//   DAP_PORT        the port of a `rewind dap --listen` (VS Code's
//                   "debugServer")
//
// What is checked is what an editor shows: the stop's reason, its line,
// the values in the Variables view, the watch and console answers.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const env = (name) => {
	const v = process.env[name];
	if (!v) throw new Error(`${name} is not set: run this through e2e/vscode_test.go`);
	return v;
};

// A replay can take seconds on a loaded machine: every wait is generous.
const WAIT = 120000;

// start starts `rewind dap` on stdio, or connects to the one listening
// on port.
async function start(port) {
	const dc = new DebugClient(env('REWIND'), 'dap', 'rewind', { cwd: env('WORK') }, true);
	dc.defaultTimeout = WAIT;
	await dc.start(port);
	return dc;
}

// open initializes the adapter the way VS Code does and launches args,
// returning the capabilities.
async function open(dc, args) {
	const init = await dc.initializeRequest();
	const initialized = dc.waitForEvent('initialized');
	await dc.launchRequest(args);
	await initialized;
	return init.body;
}

// stop sends a request that moves the replay and returns where it
// stopped: the stopped event, the top frame and its thread. The wait is
// set up before the request: the stop may come in the same read as the
// response.
async function stop(dc, command, args) {
	const stopped = dc.waitForEvent('stopped');
	await dc.send(command, args);
	const ev = await stopped;
	const st = await dc.stackTraceRequest({ threadId: ev.body.threadId });
	return { ev, top: st.body.stackFrames[0], frames: st.body.stackFrames, thread: ev.body.threadId };
}

// at checks a stop's reason and line (and function, when given).
function at(s, reason, line, fn) {
	const where = `${s.top.name}:${s.top.line} (${s.ev.body.reason}: ${s.ev.body.description || ''})`;
	assert.strictEqual(s.ev.body.reason, reason, `stopped at ${where}, want reason ${reason}`);
	assert.strictEqual(s.top.line, line, `stopped at ${where}, want line ${line}`);
	if (fn) assert.strictEqual(s.top.name, fn, `stopped at ${where}, want ${fn}`);
}

// vars lists a scope of a frame (or a variables reference) as
// name → {value, ref}.
async function vars(dc, frameId, scope) {
	let ref = frameId;
	if (scope) {
		const sc = await dc.scopesRequest({ frameId });
		const found = sc.body.scopes.find((s) => s.name === scope);
		assert.ok(found, `no scope ${scope} in ${JSON.stringify(sc.body.scopes)}`);
		ref = found.variablesReference;
	}
	const r = await dc.variablesRequest({ variablesReference: ref });
	const out = {};
	for (const v of r.body.variables) out[v.name] = { value: v.value, ref: v.variablesReference };
	return out;
}

const values = (vs) => Object.fromEntries(Object.entries(vs).map(([k, v]) => [k, v.value]));

async function evaluate(dc, expression, frameId, context) {
	return (await dc.evaluateRequest({ expression, frameId, context })).body;
}

test('steps.c: line, conditional and function breakpoints, steps and reverse steps, goto targets, variables, evaluate', async () => {
	const dc = await start();
	try {
		const src = env('STEPS_SRC');
		const caps = await open(dc, { trace: env('STEPS_TRACE') });
		for (const c of ['supportsConfigurationDoneRequest', 'supportsStepBack', 'supportsFunctionBreakpoints',
			'supportsConditionalBreakpoints', 'supportsDataBreakpoints', 'supportsGotoTargetsRequest', 'supportsEvaluateForHovers']) {
			assert.ok(caps[c], `capability ${c} missing: ${JSON.stringify(caps)}`);
		}

		// A line breakpoint, and a conditional one in square for its third call.
		const bps = await dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [{ line: 21 }, { line: 6, condition: 'x == 3' }] });
		assert.deepStrictEqual(bps.body.breakpoints.map((b) => [b.verified, b.line]), [[true, 21], [true, 6]]);
		await dc.setExceptionBreakpointsRequest({ filters: [] });

		// configurationDone: the first line of main, as rewind replay opens.
		let s = await stop(dc, 'configurationDone');
		at(s, 'entry', 18, 'main');
		assert.strictEqual(s.top.source.path, src);
		const threads = (await dc.threadsRequest()).body.threads;
		assert.strictEqual(threads.length, 1);

		s = await stop(dc, 'continue', { threadId: s.thread });
		at(s, 'breakpoint', 21, 'main');
		assert.deepStrictEqual(s.ev.body.hitBreakpointIds, [bps.body.breakpoints[0].id]);
		let locals = values(await vars(dc, s.top.id, 'Locals'));
		assert.strictEqual(locals.i, '1');
		assert.strictEqual(locals.sq, '1');
		assert.strictEqual(locals.total, '0');

		// Into add, its arguments, out again, and over the loop's lines.
		s = await stop(dc, 'stepIn', { threadId: s.thread });
		at(s, 'step', 12, 'add');
		assert.deepStrictEqual(values(await vars(dc, s.top.id, 'Arguments')), { a: '0', b: '1' });
		assert.strictEqual(s.frames[1].name, 'main');
		s = await stop(dc, 'stepOut', { threadId: s.thread });
		at(s, 'step', 21, 'main');
		s = await stop(dc, 'next', { threadId: s.thread });
		at(s, 'step', 19, 'main');
		s = await stop(dc, 'next', { threadId: s.thread });
		at(s, 'step', 20, 'main');
		assert.strictEqual(values(await vars(dc, s.top.id, 'Locals')).total, '1');

		// The condition holds at the third call only: i = 2 stops at 21 first.
		s = await stop(dc, 'continue', { threadId: s.thread });
		at(s, 'breakpoint', 21, 'main');
		assert.strictEqual(values(await vars(dc, s.top.id, 'Locals')).i, '2');
		s = await stop(dc, 'continue', { threadId: s.thread });
		at(s, 'breakpoint', 6, 'square');
		assert.strictEqual(values(await vars(dc, s.top.id, 'Arguments')).x, '3');

		// Backwards: the previous hit of 21 (i = 2), then a line back.
		s = await stop(dc, 'reverseContinue', { threadId: s.thread });
		at(s, 'breakpoint', 21, 'main');
		locals = values(await vars(dc, s.top.id, 'Locals'));
		assert.strictEqual(locals.i, '2');
		assert.strictEqual(locals.sq, '4');
		assert.strictEqual(locals.total, '1');
		s = await stop(dc, 'stepBack', { threadId: s.thread });
		at(s, 'step', 20, 'main');

		// Watch, hover and the debug console.
		assert.strictEqual((await evaluate(dc, 'total + i', s.top.id, 'watch')).result, '3');
		assert.strictEqual((await evaluate(dc, 'i', s.top.id, 'hover')).result, '2');
		assert.strictEqual((await evaluate(dc, 'total', s.top.id, 'repl')).result, '1');
		assert.match((await evaluate(dc, 'when', s.top.id, 'repl')).result, /^#\d+/);
		await assert.rejects(evaluate(dc, 'no_such_variable', s.top.id, 'watch'));

		// Instruction steps: the pc moves on and comes back, on the same line.
		const pc = s.top.instructionPointerReference;
		s = await stop(dc, 'stepIn', { threadId: s.thread, granularity: 'instruction' });
		assert.notStrictEqual(s.top.instructionPointerReference, pc);
		s = await stop(dc, 'stepBack', { threadId: s.thread, granularity: 'instruction' });
		assert.strictEqual(s.top.instructionPointerReference, pc);
		assert.strictEqual(s.top.line, 20);

		// Goto targets, with the breakpoints set before main still there:
		// line 23 runs later (once), line 18 ran before.
		let targets = (await dc.gotoTargetsRequest({ source: { path: src }, line: 23 })).body.targets;
		assert.strictEqual(targets.length, 1, JSON.stringify(targets));
		s = await stop(dc, 'goto', { threadId: s.thread, targetId: targets[0].id });
		at(s, 'goto', 23, 'main');
		assert.strictEqual(values(await vars(dc, s.top.id, 'Locals')).total, '14');
		targets = (await dc.gotoTargetsRequest({ source: { path: src }, line: 18 })).body.targets;
		assert.strictEqual(targets.length, 1, JSON.stringify(targets));
		s = await stop(dc, 'goto', { threadId: s.thread, targetId: targets[0].id });
		at(s, 'goto', 18, 'main');

		// The line breakpoints gone, a function breakpoint: add's first call.
		await dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [] });
		const fbps = await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'add' }] });
		assert.ok(fbps.body.breakpoints[0].verified);
		s = await stop(dc, 'continue', { threadId: s.thread });
		at(s, 'function breakpoint', 12, 'add');
		assert.deepStrictEqual(values(await vars(dc, s.top.id, 'Arguments')), { a: '0', b: '1' });
		await dc.setFunctionBreakpointsRequest({ breakpoints: [] });

		// To the end: the stop tells the program's status, and the session
		// stays (no exited event, which ends it in some clients); terminate
		// sends exited.
		let exitedEarly = null;
		dc.on('exited', (e) => { exitedEarly = exitedEarly || e; });
		s = await stop(dc, 'continue', { threadId: s.thread });
		assert.match(s.ev.body.description, /exit status 0/);
		s = await stop(dc, 'reverseContinue', { threadId: s.thread });
		assert.strictEqual(s.ev.body.reason, 'entry', JSON.stringify(s.ev.body));
		assert.strictEqual(exitedEarly, null, 'an exited event while the session goes on');
		dc.removeAllListeners('exited');
		const exited = dc.waitForEvent('exited');
		const terminated = dc.waitForEvent('terminated');
		await dc.terminateRequest();
		assert.strictEqual((await exited).body.exitCode, 0);
		await terminated;
	} finally {
		await dc.stop();
	}
});

test('corrupt.c: a signal stop, structures expanded, a data breakpoint found going back', async () => {
	const dc = await start();
	try {
		await open(dc, { trace: env('CORRUPT_TRACE') });
		let s = await stop(dc, 'configurationDone');
		at(s, 'entry', 30, 'main');
		s = await stop(dc, 'continue', { threadId: s.thread });
		at(s, 'exception', 24, 'sum');
		assert.strictEqual(s.ev.body.text, 'SIGSEGV');
		const exc = (await dc.exceptionInfoRequest({ threadId: s.thread })).body;
		assert.strictEqual(exc.exceptionId, 'SIGSEGV');
		assert.match(exc.description, /Segmentation fault/);
		assert.strictEqual(s.top.source.path, env('CORRUPT_SRC'));

		// head expands through the pointer to its fields.
		const args = await vars(dc, s.top.id, 'Arguments');
		assert.ok(args.head.ref > 0, `head does not expand: ${JSON.stringify(args)}`);
		const deref = await vars(dc, args.head.ref);
		const fields = await vars(dc, deref['*'].ref);
		assert.strictEqual(fields.value.value, '1');
		assert.match(fields.name.value, /^"alpha/);
		const hover = await evaluate(dc, 'head->next', s.top.id, 'hover');
		assert.strictEqual(hover.result, fields.next.value);
		assert.ok(hover.variablesReference > 0);

		// main's b->next, watched: going back finds the write through it.
		const main = s.frames.find((f) => f.name === 'main');
		const locals = await vars(dc, main.id, 'Locals');
		const bstar = await vars(dc, locals.b.ref);
		const info = await dc.dataBreakpointInfoRequest({ variablesReference: bstar['*'].ref, name: 'next' });
		assert.ok(info.body.dataId, `b->next cannot be watched: ${info.body.description}`);
		assert.ok(info.body.accessTypes.includes('write'));
		const dbps = await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.body.dataId, accessType: 'write' }] });
		assert.ok(dbps.body.breakpoints[0].verified);
		s = await stop(dc, 'reverseContinue', { threadId: s.thread });
		assert.strictEqual(s.ev.body.reason, 'data breakpoint');
		assert.strictEqual(s.top.name, 'set_name');
		assert.match(values(await vars(dc, s.top.id, 'Arguments')).src, /"bravo-overflowing"/);
		// The Registers scope shows the frame's pc.
		const regs = values(await vars(dc, s.top.id, 'Registers'));
		assert.strictEqual(regs.rip, s.top.instructionPointerReference);
		await dc.setDataBreakpointsRequest({ breakpoints: [] });

		// Hit counts and log messages are not claimed (VS Code offers
		// neither); a client that sends them anyway is told, and gets a
		// breakpoint that stops.
		const caps = (await dc.initializeRequest()).body;
		assert.ok(!caps.supportsHitConditionalBreakpoints && !caps.supportsLogPoints, JSON.stringify(caps));
		const odd = await dc.setBreakpointsRequest({ source: { path: env('CORRUPT_SRC') },
			breakpoints: [{ line: 24, hitCondition: '2' }, { line: 16, logMessage: 'i = {i}' }] });
		for (const b of odd.body.breakpoints) {
			assert.ok(b.verified);
			assert.match(b.message, /not supported/);
		}
	} finally {
		await dc.stop();
	}
});

test('launch with a program: recorded first, its output in the console, then debugged', async () => {
	const dc = await start();
	try {
		const output = dc.assertOutput('stdout', 'total 14\n');
		await open(dc, { program: env('STEPS_PROG'), cwd: env('WORK'), output: 'launched.rwd' });
		await output;
		let s = await stop(dc, 'configurationDone');
		at(s, 'entry', 18, 'main');
		await dc.setBreakpointsRequest({ source: { path: env('STEPS_SRC') }, breakpoints: [{ line: 24 }] });
		s = await stop(dc, 'continue', { threadId: s.thread });
		at(s, 'breakpoint', 24, 'main');
		assert.strictEqual(values(await vars(dc, s.top.id, 'Locals')).total, '14');
	} finally {
		await dc.stop();
	}
	require('node:fs').accessSync(path.join(env('WORK'), 'launched.rwd'));
});

test('over --listen, as VS Code\'s debugServer: two sessions one after the other', async () => {
	const port = Number(env('DAP_PORT'));
	for (const line of [21, 13]) {
		const dc = await start(port);
		try {
			await open(dc, { trace: env('STEPS_TRACE') });
			await dc.setBreakpointsRequest({ source: { path: env('STEPS_SRC') }, breakpoints: [{ line }] });
			let s = await stop(dc, 'configurationDone');
			at(s, 'entry', 18, 'main');
			s = await stop(dc, 'continue', { threadId: s.thread });
			at(s, 'breakpoint', line);
		} finally {
			await dc.stop();
		}
	}
});
