;;; rewind-dap.el --- rewind dap as a dap-mode debug provider  -*- lexical-binding: t -*-

;; Debugging a rewind recording from Emacs with dap-mode (Debian's
;; elpa-dap-mode 0.7, Emacs 28).  Load it after dap-mode:
;;
;;   (load "/path/to/rewind-dap.el")
;;   M-x dap-debug RET rewind-recording RET   (asks for the trace)
;;
;; dap-mode has no commands for the protocol's reverse requests, nor for
;; goto targets: rewind-dap-step-back, rewind-dap-reverse-continue and
;; rewind-dap-goto-line send them.  e2e/emacs_test.go drives this file in
;; a headless Emacs inside tmux.

(require 'dap-mode)
(require 'dap-ui)                       ; dap-ui-locals, dap-ui-repl

(defvar rewind-dap-program (or (getenv "REWIND") "rewind")
  "The rewind binary that serves DAP.")

(defun rewind-dap--provider (conf)
  "Start `rewind dap' on stdio for CONF, asking for the trace if unnamed."
  (unless (or (plist-get conf :trace) (plist-get conf :program))
    (setq conf (plist-put conf :trace (expand-file-name (read-file-name "Trace: " nil nil t)))))
  (plist-put conf :dap-server-path (list rewind-dap-program "dap")))

(dap-register-debug-provider "rewind" #'rewind-dap--provider)

(dap-register-debug-template "rewind-recording"
  (list :type "rewind" :request "launch" :name "rewind"
        :trace (getenv "REWIND_TRACE")))

(defun rewind-dap-step-back ()
  "Step back a line (DAP stepBack)."
  (interactive)
  (dap--step "stepBack" (dap--cur-active-session-or-die)))

(defun rewind-dap-reverse-continue ()
  "Run backwards to the previous breakpoint (DAP reverseContinue)."
  (interactive)
  (dap--step "reverseContinue" (dap--cur-active-session-or-die)))

(defun rewind-dap-goto-line (previous)
  "Go to the next arrival at the line at point; with PREVIOUS, the last one before.
The targets are those of DAP gotoTargets; the motion is DAP goto."
  (interactive "P")
  (let* ((session (dap--cur-active-session-or-die))
         (body (dap-request session "gotoTargets"
                            :source (list :path (buffer-file-name))
                            :line (line-number-at-pos)))
         (label (if previous "^previous" "^next"))
         (target (seq-find (lambda (tg) (string-match-p label (gethash "label" tg)))
                           (gethash "targets" body))))
    (unless target
      (user-error "No %s arrival at this line" (if previous "earlier" "later")))
    (dap--send-message (dap--make-request "goto" (list :threadId (dap--debug-session-thread-id session)
                                                       :targetId (gethash "id" target)))
                       (dap--resp-handler) session)
    (dap--resume-application session)))

(dap-mode 1)
(dap-ui-mode 1)
(global-set-key (kbd "<f5>") #'dap-continue)
(global-set-key (kbd "S-<f5>") #'rewind-dap-reverse-continue)
(global-set-key (kbd "<f10>") #'dap-next)
(global-set-key (kbd "S-<f10>") #'rewind-dap-step-back)
(global-set-key (kbd "<f11>") #'dap-step-in)
(global-set-key (kbd "S-<f11>") #'dap-step-out)

;;; rewind-dap.el ends here
